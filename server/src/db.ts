import net from 'node:net';
import postgres from 'postgres';
import type { Config } from './config.ts';
import { postgresSettlesRejectedCopy } from './copyfix.ts';
import { embeddedUrl, openEmbedded, readLiveLock } from './embedded.ts';
import { dbConnectionsOpen, dbPoolMax, dbPoolWaitSeconds, dbTransactionsActive } from './metrics.ts';

/**
 * Keys of the advisory locks: one place, so that no two uses pick the same number. `rollups`,
 * `groupTitles`, `agentLeases` and `liveStreams` are the first of two keys, the project
 * (agentLeases: the run; liveStreams: the client's name hashed) the second (the two-key form never
 * meets the one-key one).
 */
export const ADVISORY_LOCK = {
  migrations: 4_715_002_231,
  demoSeed: 4_715_002_232,
  rollups: 4_715_002,
  groupTitles: 4_715_003,
  agentLeases: 4_715_004,
  liveStreams: 4_715_005,
} as const;

export type Sql = postgres.Sql;
/** A transaction's handle; store functions accept either. */
export type Tx = postgres.TransactionSql | postgres.Sql;

/**
 * Takes an advisory lock of `ADVISORY_LOCK` until the transaction ends: `lock` alone, or with the
 * second key (the project, or the run) for the two-key ones.
 */
export async function lockAdvisory(sql: Tx, lock: (typeof ADVISORY_LOCK)[keyof typeof ADVISORY_LOCK], second: number | null = null): Promise<void> {
  if (second === null) await sql`select pg_advisory_xact_lock(${lock})`;
  else await sql`select pg_advisory_xact_lock(${lock}, ${second})`;
}

export interface Database {
  sql: Sql;
  /** The connection string, also for child processes and the CLI. */
  url: string;
  embedded: boolean;
  close(): Promise<void>;
}

/** What postgres.js hands its `socket` option (untyped in its declarations). */
interface SocketTarget {
  host: string[];
  port: number[];
  path: string | false;
}

/**
 * postgres.js leaves Nagle's algorithm on. A COPY sends its data and its CopyDone in two writes,
 * and the second then waits for the server's delayed ACK: ~88 ms per COPY instead of ~1.5 ms.
 * So sockets are opened here with TCP_NODELAY, each connection trying the URL's hosts in turn.
 *
 * The socket is handed over before it connects (writes wait for the connection), so that a
 * refused or timed-out connection reaches postgres.js as the socket's own error and close: those
 * free the pool's slot. A factory that rejects instead leaves the slot connecting for good, and a
 * database outage then wedged the pool one request at a time. postgres.js's connect_timeout
 * (30 s by default) bounds a connection that never answers.
 */
function socketFactory(): (target: SocketTarget) => net.Socket {
  let next = 0;
  return (target) => {
    const i = next++ % Math.max(1, target.host.length);
    const socket = target.path
      ? net.connect({ path: target.path, noDelay: true })
      : net.connect({ host: target.host[i] ?? 'localhost', port: target.port[i] ?? target.port[0] ?? 5432, noDelay: true });
    socket.once('connect', () => {
      dbConnectionsOpen.inc();
      socket.once('close', () => dbConnectionsOpen.dec());
    });
    return socket;
  };
}

/**
 * Counts the pool's use where postgres.js lets it be seen (it exposes no counts of its own): each
 * transaction and reserved connection, from the ask to the connection handed over (the pool's
 * wait, a histogram) and while held (a gauge). A plain query's wait is not seen, but the pool's
 * queue forms behind transactions, which hold connections longest. A few closures per transaction.
 */
function measurePool(sql: Sql): Sql {
  const begin = sql.begin.bind(sql) as (options: string, work: (tx: postgres.TransactionSql) => unknown) => Promise<unknown>;
  const reserve = sql.reserve.bind(sql);
  const measuredBegin = (options: unknown, work?: unknown) => {
    const fn = (typeof options === 'function' ? options : work) as (tx: postgres.TransactionSql) => unknown;
    const asked = performance.now();
    let held = false;
    const measured = (tx: postgres.TransactionSql) => {
      dbPoolWaitSeconds.observe((performance.now() - asked) / 1000);
      dbTransactionsActive.inc();
      held = true;
      return fn(tx);
    };
    return begin(typeof options === 'string' ? options : '', measured).finally(() => held && dbTransactionsActive.dec());
  };
  const measuredReserve = async () => {
    const asked = performance.now();
    const reserved = await reserve();
    dbPoolWaitSeconds.observe((performance.now() - asked) / 1000);
    dbTransactionsActive.inc();
    const release = reserved.release.bind(reserved);
    reserved.release = () => {
      dbTransactionsActive.dec();
      release();
    };
    return reserved;
  };
  return Object.assign(sql, { begin: measuredBegin as Sql['begin'], reserve: measuredReserve });
}

/**
 * Seconds before a connection that failed tries again. postgres.js's own grows to 20 s after seven
 * failures in a row, and a request queued behind it then waits that long for its first attempt,
 * also after the database is back. Attempts at a down server are refused at once: cheap to repeat.
 */
const reconnectDelaySeconds = (failures: number) => Math.min(0.05 * 2 ** failures, 1);

/**
 * A URL whose `host` query parameter names a folder (libpq's form for a Unix socket, which
 * postgres.js does not read) as postgres.js's `path` option.
 */
function unixSocketOf(url: string): { url: string; path?: string } {
  const parsed = new URL(url);
  const dir = parsed.searchParams.get('host');
  if (!dir?.startsWith('/')) return { url };
  parsed.searchParams.delete('host');
  return { url: parsed.toString(), path: `${dir}/.s.PGSQL.${parsed.port || 5432}` };
}

/**
 * A transaction left open on a connection that then sends nothing (a bug that awaits something
 * else inside `sql.begin`) is ended by PostgreSQL after this long, releasing its locks, instead of
 * holding them for good. No transaction of Proctor's waits on anything but the database (an
 * upload is read whole before its transaction begins), so this is far beyond any real pause. The
 * embedded PGlite takes the setting and does not honour it: there, the code alone must end them.
 */
export const IDLE_IN_TRANSACTION_MS = 60_000;

export function connect(url: string, max: number): Sql {
  const target = unixSocketOf(url);
  const untypedOptions = { socket: socketFactory(), ...(target.path ? { path: target.path } : {}) };
  dbPoolMax.inc(max);
  const sql = postgres(target.url, {
    max,
    backoff: reconnectDelaySeconds,
    onnotice: () => {},
    transform: { undefined: null },
    connection: { application_name: 'proctor', idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS },
    ...untypedOptions,
  });
  const end = sql.end.bind(sql);
  return Object.assign(measurePool(sql), {
    end: (options?: { timeout?: number }) => end(options).finally(() => dbPoolMax.dec(max)),
  });
}

/** What a pipelined transaction's work gives back: its result, and its last statements, not yet awaited. */
export interface PipelinedWork<T> {
  result: T;
  last: PromiseLike<unknown>;
}

/**
 * `sql.begin` in two round trips fewer, for the hot write path: on one reserved connection, BEGIN
 * goes out in the same write as the statements `work` starts first, and COMMIT in the same write
 * as the statement it gives back as `last` (postgres.js pipelines what is issued in one tick).
 * `sql.begin` waits for each. If `last` fails, PostgreSQL turns the COMMIT behind it into a rollback.
 */
export async function pipelinedTransaction<T>(sql: Sql, work: (tx: Tx) => Promise<PipelinedWork<T>>): Promise<T> {
  const tx = await sql.reserve();
  try {
    const begun = tx`begin`.execute();
    // Awaited with the COMMIT; should it fail first, the work's own statements fail with it.
    begun.catch(() => undefined);
    const { result, last } = await work(tx);
    await Promise.all([begun, last, tx`commit`]);
    return result;
  } catch (error) {
    // Always, even after the COMMIT went out: a statement's error makes PostgreSQL skip what was
    // sent behind it up to its sync, the COMMIT among them, and leave the transaction open and
    // aborted. After a COMMIT that ended it, this ROLLBACK is a notice and nothing more.
    await tx`rollback`.catch(() => undefined);
    throw error;
  } finally {
    tx.release();
  }
}

/**
 * Opens the database the server runs on: `DATABASE_URL` when set, else the embedded PostgreSQL
 * in the data directory (which this process then owns through its lock file).
 */
export async function openDatabase(config: Config, options: { briefly?: boolean } = {}): Promise<Database> {
  if (config.databaseUrl) {
    const sql = connect(config.databaseUrl, config.dbPoolMax);
    return { sql, url: config.databaseUrl, embedded: false, close: () => sql.end({ timeout: 5 }) };
  }
  const embedded = await openEmbedded(config.dataDir, options);
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
 * its socket; else the embedded database opened by the CLI itself (`briefly`: for a few
 * statements, see openEmbedded).
 */
export async function openDatabaseForCli(config: Config, options: { briefly?: boolean } = {}): Promise<Database> {
  if (config.databaseUrl) return openDatabase(config);
  const live = readLiveLock(config.dataDir);
  if (live) {
    const url = embeddedUrl(live.socketDir);
    const sql = connect(url, 1);
    return { sql, url, embedded: true, close: () => sql.end({ timeout: 5 }) };
  }
  return openDatabase(config, options);
}

const pgliteAnswers = new WeakMap<Sql, Promise<boolean>>();

/**
 * Whether the pool reaches PGlite (the embedded database, also when another process reaches it
 * through DATABASE_URL) rather than PostgreSQL: PGlite runs one query at a time and its socket
 * drops `COPY … FROM STDIN`. Asked once per pool, and again only if asking failed.
 */
export function isPglite(sql: Sql): Promise<boolean> {
  let answer = pgliteAnswers.get(sql);
  if (!answer) {
    answer = sql<{ version: string }[]>`select version()`.then(([row]) => row?.version.includes('PGlite') === true);
    answer.catch(() => pgliteAnswers.delete(sql));
    pgliteAnswers.set(sql, answer);
  }
  return answer;
}

/**
 * Whether results may be written by `COPY … FROM STDIN`: PostgreSQL takes it, PGlite's socket does
 * not, and a postgres.js without the fix would hang on a rejected one.
 */
export async function takesCopyFromStdin(sql: Sql): Promise<boolean> {
  return postgresSettlesRejectedCopy() && !(await isPglite(sql));
}

/** A value as COPY's text format takes it; strings may hold anything but NUL. */
export type CopyValue = string | number | boolean | null;

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const NEEDS_ESCAPE = /[\\\n\r\t]/;
const ESCAPED = /[\\\n\r\t]/g;

function copyText(value: CopyValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'string') return NEEDS_ESCAPE.test(value) ? value.replace(ESCAPED, (c) => COPY_ESCAPES[c] as string) : value;
  if (typeof value === 'number') return String(value);
  return value ? 't' : 'f';
}

/** Rows in COPY's text format; built by concatenation, which is what V8 does fastest here. */
export function copyLines(rows: readonly (readonly CopyValue[])[]): string {
  let text = '';
  for (const row of rows) {
    for (let i = 0; i < row.length; i++) text += (i === 0 ? '' : '\t') + copyText(row[i] as CopyValue);
    text += '\n';
  }
  return text;
}

/**
 * Rows into a table with one `COPY … FROM STDIN` (text format), each row's values in `columns`
 * order. Rejects with the server's error when PostgreSQL refuses a row. A PostgreSQL server only:
 * the embedded database's socket does not speak COPY.
 */
export async function copyRows(sql: Tx, table: string, columns: readonly string[], rows: readonly (readonly CopyValue[])[]): Promise<void> {
  const text = copyLines(rows);
  const writable = await sql`copy ${sql(table)} (${sql(columns as string[])}) from stdin`.writable();
  await new Promise<void>((resolve, reject) => {
    writable.once('error', reject);
    writable.end(text, (error?: Error | null) => (error ? reject(error) : resolve()));
  });
}

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  // postgres.js's own
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  // PostgreSQL's: shutting down, starting up, out of connections
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

/**
 * Whether an error says the database cannot be reached now (down, restarting, full), as opposed
 * to a refusal of the statement: a client may well retry the first.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return UNREACHABLE_CODES.has(code) || code.startsWith('08');
}

/** PostgreSQL's "deadlock detected" and "could not serialize": the transaction was rolled back whole, and may simply be run again. */
const RETRYABLE_CODES = new Set(['40P01', '40001']);
const TRANSACTION_ATTEMPTS = 3;

/**
 * Runs a transaction again when PostgreSQL chose it as a deadlock's victim: under load, a shard's
 * begin, another shard's results and a run's end can wait on each other's locks of the run row;
 * the victim's work was rolled back whole, so a second go is the same request, not a duplicate.
 */
export async function retryingConflicts<T>(transaction: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (attempt >= TRANSACTION_ATTEMPTS || typeof code !== 'string' || !RETRYABLE_CODES.has(code)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10 * attempt + Math.random() * 40));
    }
  }
}

/** A value as LIKE takes it literally: its own %, _ and \\ escaped. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}
