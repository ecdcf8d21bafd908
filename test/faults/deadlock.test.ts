import { describe, expect, it } from 'vitest';
import { retryingConflicts } from '../../server/src/db.ts';
import { createTestDatabase } from '../helpers/database.ts';

// A transaction PostgreSQL picks as a deadlock's victim is rolled back whole: the reporting
// transactions (a shard's begin and end, a batch of results) run it again rather than answer 500.

describe('a transaction that loses a deadlock', () => {
  it('when two transactions lock two rows in opposite orders, then PostgreSQL aborts one, and run again it goes through', async () => {
    const db = await createTestDatabase();
    if (db.embedded) return db.drop(); // PGlite runs one transaction at a time: it never deadlocks.
    const table = `deadlock_${Date.now()}`;
    await db.sql.unsafe(`create table ${table} (id int primary key, n int not null)`);
    await db.sql.unsafe(`insert into ${table} values (1, 0), (2, 0)`);
    try {
      let attempts = 0;
      let bothLockedNow = () => {};
      const bothLocked = { promise: new Promise<void>((resolve) => (bothLockedNow = resolve)), resolve: () => bothLockedNow() };
      let locked = 0;
      const lockInOrder = (first: number, second: number, retried: boolean) => {
        const run = () =>
          db.sql.begin(async (tx) => {
            attempts += retried ? 1 : 0;
            await tx.unsafe(`update ${table} set n = n + 1 where id = $1`, [first]);
            if (++locked === 2) bothLocked.resolve();
            await bothLocked.promise;
            await tx.unsafe(`update ${table} set n = n + 1 where id = $1`, [second]);
          });
        return retried ? retryingConflicts(run) : run();
      };
      const [retried, plain] = await Promise.allSettled([lockInOrder(1, 2, true), lockInOrder(2, 1, false)]);
      // One of the two was the victim: the plain one fails with 40P01, or the retried one went again.
      const victimWasPlain = plain.status === 'rejected';
      if (victimWasPlain) expect((plain.reason as { code: string }).code).toBe('40P01');
      else expect(attempts).toBe(2);
      expect(retried.status).toBe('fulfilled');
      const rows = await db.sql.unsafe<{ n: number }[]>(`select n from ${table} order by id`);
      expect(rows.map((r) => r.n)).toEqual(victimWasPlain ? [1, 1] : [2, 2]);
    } finally {
      await db.sql.unsafe(`drop table ${table}`);
      await db.drop();
    }
  });

  it('when an error is not a conflict, then it is not retried', async () => {
    let calls = 0;
    const refused = Object.assign(new Error('duplicate key'), { code: '23505' });
    await expect(
      retryingConflicts(async () => {
        calls++;
        throw refused;
      }),
    ).rejects.toBe(refused);
    expect(calls).toBe(1);
  });
});
