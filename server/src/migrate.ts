import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADVISORY_LOCK, lockAdvisory, type Sql, type Tx } from './db.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));
/** Any fixed number; every Proctor process that migrates takes the same lock. */

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return fs
    .readdirSync(dir)
    .filter((file) => /^\d{3}_[\w-]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file.replace(/\.sql$/, ''),
      sql: fs.readFileSync(path.join(dir, file), 'utf8'),
    }));
}

/**
 * Applies the pending migrations, each in its own transaction under an advisory lock, so that
 * servers starting at once apply each migration exactly once. Returns the names applied.
 */
export async function migrate(sql: Sql, migrations = listMigrations()): Promise<string[]> {
  const applied: string[] = [];
  // One statement when nothing is pending (every command's start): each migration's own
  // transaction, lock and check cost a command about as much as the rest of its work.
  const done = await appliedVersions(sql);
  for (const migration of migrations) {
    if (done.has(migration.version)) continue;
    const didApply = await sql.begin(async (tx) => {
      await lockAdvisory(tx, ADVISORY_LOCK.migrations);
      return applyMigration(tx, migration);
    });
    if (didApply) applied.push(migration.name);
  }
  return applied;
}

/** The versions applied so far; none before the first migration made the table. */
async function appliedVersions(sql: Sql): Promise<Set<number>> {
  const [table] = await sql<{ present: boolean }[]>`select to_regclass('schema_migrations') is not null as present`;
  if (!table?.present) return new Set();
  const rows = await sql<{ version: number }[]>`select version from schema_migrations`;
  return new Set(rows.map((row) => row.version));
}

/** One migration in the caller's transaction, unless it was applied before; true when this applied it. */
export async function applyMigration(tx: Tx, migration: Migration): Promise<boolean> {
  await tx`create table if not exists schema_migrations (
    version integer primary key,
    name text not null,
    applied_at timestamptz not null default now()
  )`;
  const [done] = await tx`select 1 from schema_migrations where version = ${migration.version}`;
  if (done) return false;
  await tx.unsafe(migration.sql);
  await tx`insert into schema_migrations (version, name) values (${migration.version}, ${migration.name})`;
  return true;
}
