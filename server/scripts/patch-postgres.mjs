// Two fixes to postgres.js 3.4.9, applied at install until a release carries them, from the patch
// file patch-package made: server/patches/postgres+3.4.9.patch (docs/decisions/dependency-patches.md).
// In this repository the root's postinstall applies it with `patch-package --error-on-fail`, so an
// install whose postgres.js the patch no longer fits fails there. Where @proctor/server is installed
// as a package, postgres.js sits wherever npm hoisted it, which patch-package's command (it patches
// the node_modules of the folder it runs in) does not find: this applies the same file with
// patch-package's own applyPatch in the folder that holds that node_modules. There a patch that
// does not fit never fails the install: it says so, and the server, which checks for the fixes when
// it starts (server/src/copyfix.ts), then says so too and writes results without COPY.
//
// - A `COPY … FROM STDIN` writable that the server rejects after its data was sent never settles
//   (porsager/postgres#1173): the one-line fix of porsager/postgres#1183.
// - Under load a `sql.begin` can write its BEGIN without reserving the connection
//   (porsager/postgres#823, #1189): the three changes of porsager/postgres#1207.
// - Not a fault but a cost (issue 53): a COMMIT or ROLLBACK is written at once, not at the event
//   loop's next turn (postgres.js's setImmediate), which under load held each transaction's locks
//   and connection 100 ms and more after its work was done. Unpatched, the same, only slower.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const PATCH = fileURLToPath(new URL('../patches/postgres+3.4.9.patch', import.meta.url));

try {
  const { applyPatch } = require('patch-package/dist/applyPatches');
  const { getPackageDetailsFromPatchFilename } = require('patch-package/dist/PackageDetails');
  // The package's exports hide package.json; its CommonJS entry is cjs/src/index.js.
  const root = path.resolve(path.dirname(require.resolve('postgres')), '..', '..');
  if (path.basename(root) !== 'postgres' || path.basename(path.dirname(root)) !== 'node_modules') {
    throw new Error(`postgres.js is at ${root}, not in a node_modules folder`);
  }
  const applied = applyPatch({
    patchFilePath: PATCH,
    reverse: false,
    patchDetails: getPackageDetailsFromPatchFilename(path.basename(PATCH)),
    patchDir: 'patches',
    // The folder whose node_modules holds postgres.js: the patch names its files node_modules/postgres/….
    cwd: path.dirname(path.dirname(root)),
    bestEffort: false,
  });
  if (!applied)
    console.warn(
      `@proctor/server: ${PATCH} does not fit the postgres.js at ${root}; left unpatched (check porsager/postgres#1173 and #823 against this version)`,
    );
} catch (error) {
  console.warn(`@proctor/server: postgres.js left unpatched: ${error instanceof Error ? error.message : String(error)}`);
}
