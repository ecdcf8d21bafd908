// Two fixes to postgres.js 3.4.9, applied at install until a release carries them. Where the code a
// fix patches has moved, it says so and leaves that file alone: an install never fails on it, and
// the server, which checks for the fixes when it starts (server/src/copyfix.ts), then says so and
// writes results without COPY.
//
// - A `COPY … FROM STDIN` writable that the server rejects after its data was sent never settles
//   (porsager/postgres#1173): the error is lost and, inside `sql.begin`, the transaction hangs with
//   its connection. Result ingestion relies on a COPY failing cleanly (a retried batch then takes
//   the idempotent insert): the one-line fix of porsager/postgres#1183.
// - Under load a `sql.begin` can write its BEGIN without reserving the connection
//   (porsager/postgres#823, #1189): the BEGIN's answer is then refused as UNSAFE_TRANSACTION (a 500)
//   and the open transaction goes back to the pool, where unrelated statements run inside it. The
//   reservation is skipped when the connection's pipeline is full or its socket is busy, and a
//   drained socket or a busy connection's next query hands a reserved connection out again. The
//   three changes of porsager/postgres#1207: a BEGIN that is written reserves its connection and
//   takes no more queries behind it, a queued BEGIN waits for a free connection rather than
//   pipelining onto a busy one, and a drained socket leaves a reserved connection reserved.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
// The package's exports hide package.json; its CommonJS entry is cjs/src/index.js.
const root = path.resolve(path.dirname(require.resolve('postgres')), '..', '..');
const FOLDERS = ['src', 'cjs/src', 'cf/src'];

/** Each change: the file, the text it replaces, and its replacement (which names its issue, so a patched file is told by it). */
const CHANGES = [
  {
    file: 'connection.js',
    issue: 'porsager/postgres#1173',
    from: '  function errored(err) {\n',
    to: '  function errored(err) {\n    final && (final(err), final = null) // porsager/postgres#1183\n',
  },
  {
    file: 'connection.js',
    issue: 'porsager/postgres#823',
    from: [
      '      return write(toBuffer(q))',
      '        && !q.describeFirst',
      '        && !q.cursorFn',
      '        && sent.length < max_pipeline',
      '        && (!q.options.onexecute || q.options.onexecute(connection))',
    ].join('\n'),
    to: [
      '      const written = write(toBuffer(q))',
      '      if (q.options.onexecute) // porsager/postgres#823: a written BEGIN reserves its connection',
      '        return q.options.onexecute(connection), false',
      '      return written',
      '        && !q.describeFirst',
      '        && !q.cursorFn',
      '        && sent.length < max_pipeline',
    ].join('\n'),
  },
  {
    file: 'connection.js',
    issue: 'porsager/postgres#823',
    from: '  function drain() {\n    !query && onopen(connection)\n',
    to: '  function drain() {\n    !query && !connection.reserved && onopen(connection) // porsager/postgres#823\n',
  },
  {
    file: 'index.js',
    issue: 'porsager/postgres#823',
    from: '    busy.length\n      ? go(busy.shift(), query)\n      : queries.push(query)\n',
    to: '    busy.length && !query.options.onexecute // porsager/postgres#823: a BEGIN waits for a free connection\n      ? go(busy.shift(), query)\n      : queries.push(query)\n',
  },
];

let patchedFolders = 0;
for (const folder of FOLDERS) {
  if (!fs.existsSync(path.join(root, folder, 'connection.js'))) continue;
  patchedFolders++;
  for (const change of CHANGES) {
    const target = path.join(root, folder, change.file);
    const text = fs.readFileSync(target, 'utf8');
    if (text.includes(change.to)) continue;
    if (!text.includes(change.from)) {
      console.warn(
        `@proctor/server: ${target} no longer has the code the fix of ${change.issue} changes; left unpatched (check the issue against this version)`,
      );
      continue;
    }
    fs.writeFileSync(target, text.replace(change.from, change.to));
  }
}
if (patchedFolders === 0) console.warn(`@proctor/server: no postgres.js connection.js found under ${root}; left unpatched`);
