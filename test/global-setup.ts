import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/**
 * Builds what the tests run as users get it. Each test file makes its own database: a throwaway one
 * on DATABASE_URL's server, else an embedded one of its own (test/helpers/database.ts).
 */
export default function setup(): void {
  // Playwright loads the reporter as the compiled package entry, as a user's config would.
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'reporter/tsconfig.json'], { stdio: 'inherit' });
  // The dashboard's pages link its bundled script and stylesheet, built from server/src/dashboard/client/.
  execFileSync(process.execPath, ['server/scripts/build-dashboard.mjs'], { stdio: 'inherit' });
  // npm links a package's command only when its file exists: on a fresh clone, `npm ci` ran before
  // reporter/dist was built, and the documented `npx @proctor/reporter …` lines need proctor-ci.
  if (!fs.existsSync('node_modules/.bin/proctor-ci')) execFileSync('npm', ['rebuild', '@proctor/reporter', '--ignore-scripts'], { stdio: 'inherit' });
  // The server's `proctor` is a file of the repository (server/bin/proctor.js), linked by any `npm ci`;
  // an install made before it was (its command then named dist/, unbuilt at install) is linked here.
  if (!fs.existsSync('node_modules/.bin/proctor')) execFileSync('npm', ['rebuild', '@proctor/server', '--ignore-scripts'], { stdio: 'inherit' });
}
