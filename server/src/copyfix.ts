import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

// postgres.js 3.4.9 has two faults the package's postinstall fixes (scripts/patch-postgres.mjs applies
// patches/postgres+3.4.9.patch with patch-package):
// it never settles a `COPY … FROM STDIN` that the server rejects after its data was sent
// (porsager/postgres#1173), and under load a `sql.begin` can lose its connection's reservation
// (porsager/postgres#823). An install with scripts turned off (`--ignore-scripts`, npm's
// allowScripts) skips them: results are then written with the idempotent insert only, never by
// COPY, and the server says at start that the fixes are missing.
const COPY_FIX = 'final && (final(err), final = null)';
const BEGIN_FIX = '// porsager/postgres#823: a written BEGIN reserves its connection';

let source: string | null | undefined;

function connectionSource(): string | null {
  if (source === undefined) source = readConnectionSource();
  return source;
}

/** Whether the postgres.js this process loads settles a rejected COPY (patched, or a release that carries the fix). */
export function postgresSettlesRejectedCopy(): boolean {
  return connectionSource()?.includes(COPY_FIX) ?? false;
}

/** Whether the postgres.js this process loads carries both of the install's fixes. */
export function postgresIsPatched(): boolean {
  return postgresSettlesRejectedCopy() && (connectionSource()?.includes(BEGIN_FIX) ?? false);
}

function readConnectionSource(): string | null {
  try {
    // The package's exports hide its files; its CommonJS entry is cjs/src/index.js, its ESM one src/index.js.
    const root = path.resolve(path.dirname(createRequire(import.meta.url).resolve('postgres')), '..', '..');
    return fs.readFileSync(path.join(root, 'src', 'connection.js'), 'utf8');
  } catch {
    return null;
  }
}
