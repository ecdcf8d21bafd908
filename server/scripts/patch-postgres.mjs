// postgres.js 3.4.9 never settles a `COPY … FROM STDIN` writable that the server rejects after
// its data was sent (porsager/postgres#1173): the error is lost and, inside `sql.begin`, the
// transaction hangs with its connection. Result ingestion relies on a COPY failing cleanly (a
// retried batch then takes the idempotent insert), so the one-line fix of porsager/postgres#1183
// is applied at install until a release carries it. Where the code it patches has moved, it says
// so and leaves the file alone: an install never fails on it, and the server, which checks for the
// fix when it starts (server/src/copyfix.ts), then writes results without COPY.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
// The package's exports hide package.json; its CommonJS entry is cjs/src/index.js.
const root = path.resolve(path.dirname(require.resolve('postgres')), '..', '..');
const ANCHOR = '  function errored(err) {\n';
const FIX = '    final && (final(err), final = null) // porsager/postgres#1183\n';

let patched = 0;
for (const file of ['src/connection.js', 'cjs/src/connection.js', 'cf/src/connection.js']) {
  const target = path.join(root, file);
  if (!fs.existsSync(target)) continue;
  const text = fs.readFileSync(target, 'utf8');
  if (!text.includes(FIX)) {
    if (!text.includes(ANCHOR)) {
      console.warn(`@proctor/server: ${target} no longer has \`function errored(err)\`; left unpatched (check porsager/postgres#1173 against this version)`);
      continue;
    }
    fs.writeFileSync(target, text.replace(ANCHOR, ANCHOR + FIX));
  }
  patched++;
}
if (patched === 0) console.warn(`@proctor/server: no postgres.js connection.js found under ${root}; left unpatched`);
