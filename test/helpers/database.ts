import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { connect, type Sql } from '../../server/src/db.ts';
import { migrate } from '../../server/src/migrate.ts';

export interface TestDatabase {
  url: string;
  sql: Sql;
  /** Whether this is the shared embedded database (one connection at a time is advised). */
  embedded: boolean;
  drop(): Promise<void>;
}

/**
 * A database of its own on the PostgreSQL server at `adminUrl`, named `<prefix>_<random>`:
 * migrated unless `migrated` is false; `drop` ends the pool and drops it. Tests and benches alike
 * make their databases with this.
 */
export async function throwawayDatabase(
  adminUrl: string,
  options: { prefix: string; poolMax?: number; migrated?: boolean; keep?: boolean },
): Promise<TestDatabase> {
  const name = `${options.prefix}_${randomBytes(6).toString('hex')}`;
  const admin = connect(adminUrl, 1);
  await admin.unsafe(`create database "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const sql = connect(url.toString(), options.poolMax ?? 10);
  if (options.migrated !== false) await migrate(sql);
  return {
    url: url.toString(),
    sql,
    embedded: false,
    drop: async () => {
      await sql.end({ timeout: 5 });
      if (options.keep) console.log(`  kept database ${name}`);
      else await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end();
    },
  };
}

/** A migrated database of the test file's own: a throwaway one on DATABASE_URL, else the shared embedded one. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const embeddedUrl = inject('embeddedDatabaseUrl');
  if (embeddedUrl) {
    const sql = connect(embeddedUrl, 1);
    await migrate(sql);
    return { url: embeddedUrl, sql, embedded: true, drop: () => sql.end() };
  }
  return throwawayDatabase(process.env.DATABASE_URL as string, { prefix: 'proctor_test' });
}
