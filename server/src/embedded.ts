import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { PGlite } from '@electric-sql/pglite';
import { EmbeddedSocketServer } from './embedded-socket.ts';

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

/** Only the owner may read a folder's files or enter its folders: PGlite writes them world-readable. */
function ownerOnly(dir: string): void {
  fs.chmodSync(dir, 0o700);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) ownerOnly(full);
    else if (entry.isFile()) fs.chmodSync(full, 0o600);
  }
}

/**
 * Starts PGlite on `<dataDir>/pgdata` behind a Unix socket in `<dataDir>/socket`, both reachable by
 * this user alone (the embedded database takes any password, so a TCP port would let every local
 * user in), under the lock file.
 */
/**
 * PostgreSQL's buffer cache for a command that opens the database for a few statements: the
 * default (128 MB) costs PGlite's start about a fifth of its time to set up, and a command reads
 * a few pages. A server keeps the default.
 */
const BRIEF_SHARED_BUFFERS = '8MB';

/**
 * For a few statements, PGlite's WebAssembly (9 MB) is run by V8's baseline compiler alone: the
 * optimising tier recompiles it on other threads meanwhile, about half of a short command's CPU
 * on a 2-core machine, for code the command leaves before it pays off. A server keeps both tiers.
 */
function baselineWasmOnly(): void {
  v8.setFlagsFromString('--liftoff-only');
}

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
    if (options.briefly) baselineWasmOnly();
    const startParams = options.briefly ? [...PGlite.defaultStartParams, '-c', `shared_buffers=${BRIEF_SHARED_BUFFERS}`] : undefined;
    const db = await PGlite.create({ dataDir: pgdata, ...(startParams ? { startParams } : {}) });
    ownerOnly(pgdata);
    const socketDir = path.join(dataDir, 'socket');
    fs.mkdirSync(socketDir, { recursive: true, mode: 0o700 });
    fs.chmodSync(socketDir, 0o700);
    const socketPath = path.join(socketDir, '.s.PGSQL.5432');
    // A socket left by a server that died holds the name; the lock says no live server owns it.
    fs.rmSync(socketPath, { force: true });
    const server = new EmbeddedSocketServer(db, SOCKET_CONNECTIONS);
    await server.listen({ path: socketPath });
    writeLock(dataDir, { pid: process.pid, socketDir, startedAt: new Date().toISOString() });
    process.once('exit', release);
    return {
      url: embeddedUrl(socketDir),
      close: async () => {
        await server.close();
        await db.close();
        release();
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}
