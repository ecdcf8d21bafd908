import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { PgliteOptions, ServedPglite } from './embedded-pglite.ts';
import type { CloseMessage, ListeningMessage } from './embedded-worker.ts';

/**
 * Room for the server's connection and CLI commands run while it serves: their exchanges take turns
 * on the one session, so more connections only queue, never interleave.
 */
const SOCKET_CONNECTIONS = 32;

interface LockContent {
  pid: number;
  /** The folder of the server's Unix socket; empty while it starts. */
  socketDir: string;
  startedAt: string;
}

export class DataDirLockedError extends Error {}

export interface Embedded {
  url: string;
  close(): Promise<void>;
}

function lockPath(dataDir: string): string {
  return path.join(dataDir, 'server.lock');
}

/** Whether a process runs (one of another user's counts: EPERM). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readLock(dataDir: string): LockContent | null {
  try {
    return JSON.parse(fs.readFileSync(lockPath(dataDir), 'utf8')) as LockContent;
  } catch {
    return null;
  }
}

/** The lock of a server that is running on this data directory now, if any. */
export function readLiveLock(dataDir: string): LockContent | null {
  const lock = readLock(dataDir);
  return lock && lock.pid !== process.pid && isAlive(lock.pid) && lock.socketDir ? lock : null;
}

/** Takes the data directory's lock file, or says who holds it; a dead holder's lock is taken over. */
function acquireLock(dataDir: string): void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(lockPath(dataDir), 'wx');
      fs.writeSync(fd, JSON.stringify({ pid: process.pid, socketDir: '', startedAt: new Date().toISOString() }));
      fs.closeSync(fd);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readLock(dataDir);
      if (holder && holder.pid !== process.pid && isAlive(holder.pid)) {
        throw new DataDirLockedError(
          `the data directory ${dataDir} is in use by another Proctor process (pid ${holder.pid}, started ${holder.startedAt}); ` +
            'stop it, or set PROCTOR_DATA_DIR to another directory, or DATABASE_URL to a PostgreSQL server',
        );
      }
      fs.rmSync(lockPath(dataDir), { force: true });
    }
  }
  throw new DataDirLockedError(`could not take the lock file ${lockPath(dataDir)}`);
}

function writeLock(dataDir: string, content: LockContent): void {
  const temporary = `${lockPath(dataDir)}.${process.pid}`;
  fs.writeFileSync(temporary, JSON.stringify(content), { mode: 0o600 });
  fs.renameSync(temporary, lockPath(dataDir));
}

/** The connection string of an embedded database listening in `socketDir` (libpq's form; db.ts reads it). */
export function embeddedUrl(socketDir: string): string {
  return `postgres://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}`;
}

/**
 * The thread's entry: embedded-worker.js beside this file in server/dist. From the TypeScript
 * sources (tsx, vitest), embedded-worker.ts, behind a first module that registers tsx's loader in
 * the thread: Node 20 gives a worker thread none of its parent's loaders.
 */
function workerEntry(): URL {
  if (!new URL(import.meta.url).pathname.endsWith('.ts')) return new URL('./embedded-worker.js', import.meta.url);
  const entry = new URL('./embedded-worker.ts', import.meta.url).href;
  const loader = `import { register } from ${JSON.stringify(import.meta.resolve('tsx/esm/api'))};\nregister();\nawait import(${JSON.stringify(entry)});\n`;
  return new URL(`data:text/javascript,${encodeURIComponent(loader)}`);
}

/**
 * Starts PGlite and its socket server in a worker thread of their own (embedded-worker.ts): every
 * statement PGlite runs holds the thread that runs it, and so never this one, with its requests.
 * Resolves once it listens; rejects with the thread's error when PGlite cannot start (a broken
 * data folder) or the socket cannot listen. A thread that ends by itself later ends the process,
 * as PGlite failing in the process did: nothing could reach the database any more.
 */
export async function startEmbeddedThread(options: PgliteOptions): Promise<ServedPglite> {
  const worker = new Worker(workerEntry(), { workerData: options });
  const ended = new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`the embedded database's thread exited with code ${code}`))));
  });
  const listening = await Promise.race([
    new Promise<ListeningMessage>((resolve) => worker.once('message', resolve)),
    ended.then(() => Promise.reject(new Error("the embedded database's thread ended before it listened"))),
  ]);
  let closing: Promise<void> | null = null;
  const unexpected = (error: unknown) => {
    if (closing) return;
    setImmediate(() => {
      throw error;
    });
  };
  ended.then(() => unexpected(new Error("the embedded database's thread ended by itself")), unexpected);
  return {
    port: listening.port,
    close: () => {
      if (!closing) {
        worker.postMessage({ type: 'close' } satisfies CloseMessage);
        closing = ended;
      }
      return closing;
    },
  };
}

/**
 * Starts PGlite on `<dataDir>/pgdata` behind a Unix socket in `<dataDir>/socket`, both reachable by
 * this user alone (the embedded database takes any password, so a TCP port would let every local
 * user in), under the lock file. PGlite runs in a thread of its own (startEmbeddedThread), but for
 * `briefly`, a command's few statements (see embedded-pglite.ts), which run in the command's thread.
 */
export async function openEmbedded(dataDir: string, options: { briefly?: boolean } = {}): Promise<Embedded> {
  fs.mkdirSync(dataDir, { recursive: true });
  acquireLock(dataDir);
  const release = () => {
    const lock = readLock(dataDir);
    if (lock?.pid === process.pid) fs.rmSync(lockPath(dataDir), { force: true });
  };
  try {
    const pgdata = path.join(dataDir, 'pgdata');
    fs.mkdirSync(pgdata, { recursive: true, mode: 0o700 });
    const socketDir = path.join(dataDir, 'socket');
    fs.mkdirSync(socketDir, { recursive: true, mode: 0o700 });
    fs.chmodSync(socketDir, 0o700);
    const socketPath = path.join(socketDir, '.s.PGSQL.5432');
    // A socket left by a server that died holds the name; the lock says no live server owns it.
    fs.rmSync(socketPath, { force: true });
    const pglite: PgliteOptions = { pgdata, listen: { path: socketPath }, maxConnections: SOCKET_CONNECTIONS, briefly: options.briefly === true };
    // A command's few statements hold no one else's requests: its own thread runs them, without a thread to start.
    const served = options.briefly ? await (await import('./embedded-pglite.ts')).servePglite(pglite) : await startEmbeddedThread(pglite);
    writeLock(dataDir, { pid: process.pid, socketDir, startedAt: new Date().toISOString() });
    process.once('exit', release);
    return {
      url: embeddedUrl(socketDir),
      close: async () => {
        await served.close();
        release();
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}
