import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { PGlite } from '@electric-sql/pglite';
import { EmbeddedSocketServer } from './embedded-socket.ts';

// PGlite (PostgreSQL compiled to WebAssembly) behind its socket server. PGlite runs every statement
// on the thread that calls it: a server runs it in a thread of its own (embedded-worker.ts), a
// command for its few statements in its own thread (docs/decisions/embedded-database-thread.md).

/** Where and how PGlite is served (a worker thread's workerData). */
export interface PgliteOptions {
  /** PGlite's data folder, made this user's alone once PGlite has written it; in memory when null. */
  pgdata: string | null;
  /** A Unix socket (the server's) or a TCP port (tests: port 0 takes a free one). */
  listen: { path: string } | { host: string; port: number };
  maxConnections: number;
  /** For a command's few statements rather than a server's life: see baselineWasmOnly and BRIEF_SHARED_BUFFERS. */
  briefly: boolean;
}

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
 * (V8's flags are the process's: the command's process runs no other WebAssembly.)
 */
function baselineWasmOnly(): void {
  v8.setFlagsFromString('--liftoff-only');
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

export interface ServedPglite {
  /** The TCP port it listens on; null on a Unix socket. */
  port: number | null;
  /** Closes the socket, then PGlite: its last writes reach the disk. */
  close(): Promise<void>;
}

/** Starts PGlite and its socket server; rejects when PGlite cannot start (a broken data folder) or the socket cannot listen. */
export async function servePglite(options: PgliteOptions): Promise<ServedPglite> {
  if (options.briefly) baselineWasmOnly();
  const startParams = options.briefly ? [...PGlite.defaultStartParams, '-c', `shared_buffers=${BRIEF_SHARED_BUFFERS}`] : undefined;
  const db = await PGlite.create({ ...(options.pgdata ? { dataDir: options.pgdata } : {}), ...(startParams ? { startParams } : {}) });
  const server = new EmbeddedSocketServer(db, options.maxConnections);
  try {
    if (options.pgdata) ownerOnly(options.pgdata);
    const port = await server.listen(options.listen);
    return {
      port,
      close: async () => {
        await server.close();
        await db.close();
      },
    };
  } catch (error) {
    await server.close();
    await db.close();
    throw error;
  }
}
