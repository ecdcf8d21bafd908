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

function withDatabaseName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** A migrated database of the test file's own: a throwaway one on DATABASE_URL, else the shared embedded one. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const embeddedUrl = inject('embeddedDatabaseUrl');
  if (embeddedUrl) {
    const sql = connect(embeddedUrl, 1);
    await migrate(sql);
    return { url: embeddedUrl, sql, embedded: true, drop: () => sql.end() };
  }
  const adminUrl = process.env.DATABASE_URL as string;
  const name = `proctor_test_${randomBytes(6).toString('hex')}`;
  const admin = connect(adminUrl, 1);
  await admin.unsafe(`create database "${name}"`);
  const url = withDatabaseName(adminUrl, name);
  const sql = connect(url, 10);
  await migrate(sql);
  return {
    url,
    sql,
    embedded: false,
    drop: async () => {
      await sql.end({ timeout: 5 });
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end();
    },
  };
}
