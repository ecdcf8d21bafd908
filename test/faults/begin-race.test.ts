import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { throwawayDatabase } from '../helpers/database.ts';

// Under load postgres.js 3.4.9 can write a transaction's BEGIN without reserving its connection
// (porsager/postgres#823): the BEGIN's answer is refused as UNSAFE_TRANSACTION (a 500 from a
// reporting route, seen in bench/load at 2,000 shards) and the open transaction goes back to the
// pool. The package's postinstall fixes it (server/patches/postgres+3.4.9.patch). The scenario is the
// issue's reproduction: a small pool with a short pipeline, one connection open and two opening
// while all three are given slow statements, then plain queries and transactions queued behind.

describe('transactions queued while every connection of the pool is busy or opening', () => {
  it('when the connections come free, then every transaction commits on a connection of its own', async () => {
    if (!process.env.DATABASE_URL) return; // The embedded database runs on one connection, where postgres.js does not check.
    const db = await throwawayDatabase(process.env.DATABASE_URL, { prefix: 'proctor_begin_race', migrated: false });
    const failures: string[] = [];
    const notices: string[] = [];
    try {
      await db.sql`create table written (round int not null, n int not null)`;
      for (let round = 0; round < 10; round++) {
        // max_pipeline is postgres.js's option, missing from its types.
        const sql = postgres(db.url, {
          max: 3,
          max_pipeline: 2,
          onnotice: (notice) => notices.push(`${notice.code} ${notice.message}`),
        } as postgres.Options<Record<string, never>>);
        const failed = (error: { code?: string; message: string }) => failures.push(`${error.code ?? ''} ${error.message}`);
        try {
          await sql`select 1`;
          const busy = Array.from({ length: 3 }, () => sql`select pg_sleep(0.3)`.catch(failed));
          await new Promise((resolve) => setTimeout(resolve, 10));
          const plain = Array.from({ length: 6 }, (_, n) => sql`select ${n}::int`.catch(failed));
          const transactions = Array.from({ length: 5 }, (_, n) =>
            sql
              .begin(async (tx) => {
                await tx`insert into written values (${round}, ${n})`;
                await tx`select ${n}::int as n`;
              })
              .catch(failed),
          );
          await Promise.all([...busy, ...plain, ...transactions]);
        } finally {
          await sql.end({ timeout: 5 });
        }
      }
      expect(failures).toEqual([]);
      // PostgreSQL warns 25001 when a BEGIN comes inside a transaction: two transactions shared a connection.
      expect(notices).toEqual([]);
      const [written] = await db.sql<{ n: number }[]>`select count(*)::int as n from written`;
      expect(written?.n).toBe(50);
    } finally {
      await db.drop();
    }
  });
});
