import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

// postgres.js 3.4.9 never settles a `COPY … FROM STDIN` that the server rejects after its data was
// sent (porsager/postgres#1173): the transaction hangs with its connection. The package's
// postinstall (scripts/patch-postgres.mjs) applies the fix of porsager/postgres#1183; an install
// with scripts turned off (`--ignore-scripts`, npm's allowScripts) skips it, and then results are
// written with the idempotent insert only, never by COPY.
const FIX = 'final && (final(err), final = null)';

let answer: boolean | null = null;

/** Whether the postgres.js this process loads settles a rejected COPY (patched, or a release that carries the fix). */
export function postgresSettlesRejectedCopy(): boolean {
  if (answer === null) answer = readConnectionSource()?.includes(FIX) ?? false;
  return answer;
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
