import { randomBytes } from 'node:crypto';
import { connect, type Sql } from '../../server/src/db.ts';
import { startEmbeddedThread } from '../../server/src/embedded.ts';
import { type Migration, migrate } from '../../server/src/migrate.ts';

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
 * make their databases with this. `migrations`: those to apply, when not all (a test of one migration's upgrade).
 */
export async function throwawayDatabase(
  adminUrl: string,
  options: { prefix: string; poolMax?: number; migrated?: boolean; keep?: boolean; migrations?: Migration[] },
): Promise<TestDatabase> {
  const name = `${options.prefix}_${randomBytes(6).toString('hex')}`;
  const admin = connect(adminUrl, 1);
  await admin.unsafe(`create database "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const sql = connect(url.toString(), options.poolMax ?? 10);
  if (options.migrated !== false) await migrate(sql, options.migrations);
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

/**
 * An embedded PostgreSQL of its own (PGlite, in memory or in `dataDir`, in a thread of its own served
 * on a loopback port, as the server serves its embedded one), migrated: PGlite holds a single
 * database, so a test file that shared one would see every other file's runs, files and retention passes.
 */
export async function embeddedDatabase(options: { dataDir?: string; maxConnections?: number; migrations?: Migration[] } = {}): Promise<TestDatabase> {
  const thread = await startEmbeddedThread({
    pgdata: options.dataDir ?? null,
    listen: { host: '127.0.0.1', port: 0 },
    maxConnections: options.maxConnections ?? 40,
    briefly: false,
  });
  const url = `postgres://postgres@127.0.0.1:${thread.port}/postgres`;
  const sql = connect(url, 1);
  await migrate(sql, options.migrations);
  return {
    url,
    sql,
    embedded: true,
    drop: async () => {
      await sql.end({ timeout: 5 });
      await thread.close();
    },
  };
}

/** A migrated database of the test file's own: a throwaway one on DATABASE_URL, else an embedded one (the README's `npm test`). */
export async function createTestDatabase(options: { migrations?: Migration[] } = {}): Promise<TestDatabase> {
  if (!process.env.DATABASE_URL) return embeddedDatabase(options);
  return throwawayDatabase(process.env.DATABASE_URL, { prefix: 'proctor_test', ...options });
}
