import postgres from 'postgres';
import type { Config } from './config.ts';
import { openEmbedded, readLiveLock } from './embedded.ts';

export type Sql = postgres.Sql;
/** A transaction's handle; store functions accept either. */
export type Tx = postgres.TransactionSql | postgres.Sql;

export interface Database {
  sql: Sql;
  /** The connection string, also for child processes and the CLI. */
  url: string;
  embedded: boolean;
  close(): Promise<void>;
}

export function connect(url: string, max: number): Sql {
  return postgres(url, {
    max,
    onnotice: () => {},
    transform: { undefined: null },
    connection: { application_name: 'proctor' },
  });
}

/**
 * Opens the database the server runs on: `DATABASE_URL` when set, else the embedded PostgreSQL
 * in the data directory (which this process then owns through its lock file).
 */
export async function openDatabase(config: Config): Promise<Database> {
  if (config.databaseUrl) {
    const sql = connect(config.databaseUrl, config.dbPoolMax);
    return { sql, url: config.databaseUrl, embedded: false, close: () => sql.end({ timeout: 5 }) };
  }
  const embedded = await openEmbedded(config.dataDir);
  // The embedded server runs one query at a time; one pooled connection leaves the other
  // socket slots free for the CLI while the server runs.
  const sql = connect(embedded.url, 1);
  return {
    sql,
    url: embedded.url,
    embedded: true,
    close: async () => {
      await sql.end({ timeout: 5 });
      await embedded.close();
    },
  };
}

/**
 * The CLI's connection: `DATABASE_URL`; else the embedded database of a running server through
 * its socket; else the embedded database opened by the CLI itself.
 */
export async function openDatabaseForCli(config: Config): Promise<Database> {
  if (config.databaseUrl) return openDatabase(config);
  const live = readLiveLock(config.dataDir);
  if (live) {
    const url = `postgres://postgres@${live.host}:${live.port}/postgres`;
    const sql = connect(url, 1);
    return { sql, url, embedded: true, close: () => sql.end({ timeout: 5 }) };
  }
  return openDatabase(config);
}
