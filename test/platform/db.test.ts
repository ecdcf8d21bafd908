import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyRows, pipelinedTransaction, takesCopyFromStdin } from '../../server/src/db.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql`create table copy_probe (id integer primary key, note text)`;
});
afterAll(async () => db?.drop());

it('when the database is the embedded one, then it is known not to take COPY FROM STDIN, and a PostgreSQL server to take it', async () => {
  expect(await takesCopyFromStdin(db.sql)).toBe(!db.embedded);
});

// COPY FROM STDIN needs a PostgreSQL server: the embedded database's socket does not speak it.
describe.skipIf(!process.env.DATABASE_URL)('COPY through postgres.js', () => {
  it('when PostgreSQL refuses a COPY, then copyRows rejects with its error and the connection serves the next transaction', async () => {
    await db.sql`insert into copy_probe (id, note) values (1, 'kept')`;
    const refused = db.sql.begin((tx) =>
      copyRows(
        tx,
        'copy_probe',
        ['id', 'note'],
        [
          [2, 'new'],
          [1, 'duplicate'],
        ],
      ),
    );
    await expect(refused).rejects.toMatchObject({ code: '23505', constraint_name: 'copy_probe_pkey' });
    await db.sql.begin((tx) => copyRows(tx, 'copy_probe', ['id', 'note'], [[3, 'after']]));
    const rows = await db.sql<{ id: number; note: string }[]>`select id, note from copy_probe order by id`;
    expect(rows).toEqual([
      { id: 1, note: 'kept' },
      { id: 3, note: 'after' },
    ]);
    const aborted = await db.sql`select 1 from pg_stat_activity where datname = current_database() and state = 'idle in transaction (aborted)'`;
    expect(aborted).toHaveLength(0);
  }, 20_000);

  it('when values hold the characters COPY escapes, then they are stored as given', async () => {
    const notes = ['a\tb', 'line\nbreak', 'cr\rlf', 'back\\slash', '\\N', '\\.', '', 'é 🎭'];
    await db.sql.begin((tx) => copyRows(tx, 'copy_probe', ['id', 'note'], [...notes.map((note, i) => [100 + i, note]), [200, null]]));
    const rows = await db.sql<{ note: string | null }[]>`select note from copy_probe where id >= 100 order by id`;
    expect(rows.map((row) => row.note)).toEqual([...notes, null]);
  });
});

describe('pipelined transactions', () => {
  const idle = async () => db.sql`select 1 from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`;
  const notes = async (from: number) => (await db.sql<{ note: string }[]>`select note from copy_probe where id >= ${from} order by id`).map((row) => row.note);

  it('when the work and its last statement succeed, then both are committed together', async () => {
    const result = await pipelinedTransaction(db.sql, async (tx) => {
      await tx`insert into copy_probe (id, note) values (300, 'first')`;
      return { result: 'done', last: tx`insert into copy_probe (id, note) values (301, 'last')` };
    });
    expect(result).toBe('done');
    expect(await notes(300)).toEqual(['first', 'last']);
  });

  it('when the work throws, then nothing it wrote stays and the connection is not left in a transaction', async () => {
    const failing = pipelinedTransaction(db.sql, async (tx) => {
      await tx`insert into copy_probe (id, note) values (400, 'undone')`;
      throw new Error('refused by the work');
    });
    await expect(failing).rejects.toThrow('refused by the work');
    expect(await notes(400)).toEqual([]);
    expect(await idle()).toHaveLength(0);
  });

  it('when the last statement fails, then its error surfaces, the COMMIT sent with it undoes the work and the pool goes on', async () => {
    const failing = pipelinedTransaction(db.sql, async (tx) => {
      await tx`insert into copy_probe (id, note) values (500, 'undone')`;
      return { result: null, last: tx`insert into copy_probe (id, note) values (500, 'duplicate')` };
    });
    await expect(failing).rejects.toMatchObject({ code: '23505' });
    expect(await notes(500)).toEqual([]);
    expect(await idle()).toHaveLength(0);
    await pipelinedTransaction(db.sql, async (tx) => ({ result: null, last: tx`insert into copy_probe (id, note) values (501, 'after')` }));
    expect(await notes(500)).toEqual(['after']);
  });
});
