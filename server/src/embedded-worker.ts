import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { EmbeddedSocketServer } from './embedded-socket.ts';

// The embedded database's thread: PGlite (PostgreSQL compiled to WebAssembly) runs every statement
// on the thread that calls it, so it runs here, with the socket server that hands it the wire
// protocol's messages, and the thread that started it (the server's, with its requests) only speaks
// that protocol over the socket (docs/decisions/embedded-database-thread.md).

/** What the thread is started with (its workerData). */
export interface EmbeddedThreadOptions {
  /** PGlite's data folder, made this user's alone once PGlite has written it; in memory when null. */
  pgdata: string | null;
  /** A Unix socket (the server's) or a TCP port (tests: port 0 takes a free one). */
  listen: { path: string } | { host: string; port: number };
  maxConnections: number;
  /** For a command's few statements rather than a server's life: see baselineWasmOnly and BRIEF_SHARED_BUFFERS. */
  briefly: boolean;
}

/** The thread's one message: it listens (on `port` when TCP). It ends once closed, or fails with an error. */
export interface ListeningMessage {
  type: 'listening';
  port: number | null;
}

/** The parent's one message: close the socket and then PGlite (its last writes reach the disk), then end. */
export interface CloseMessage {
  type: 'close';
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

async function run(options: EmbeddedThreadOptions): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('embedded-worker.ts runs as a worker thread (see startEmbeddedThread)');
  if (options.briefly) baselineWasmOnly();
  const startParams = options.briefly ? [...PGlite.defaultStartParams, '-c', `shared_buffers=${BRIEF_SHARED_BUFFERS}`] : undefined;
  const db = await PGlite.create({ ...(options.pgdata ? { dataDir: options.pgdata } : {}), ...(startParams ? { startParams } : {}) });
  const server = new EmbeddedSocketServer(db, options.maxConnections);
  let listening: number | null;
  try {
    if (options.pgdata) ownerOnly(options.pgdata);
    listening = await server.listen(options.listen);
  } catch (error) {
    await server.close();
    await db.close();
    throw error;
  }
  port.once('message', (_message: CloseMessage) => {
    void (async () => {
      await server.close();
      await db.close();
      // Nothing is left to keep the thread: it ends, and the parent's close resolves on its exit.
      port.close();
    })();
  });
  port.postMessage({ type: 'listening', port: listening } satisfies ListeningMessage);
}

await run(workerData as EmbeddedThreadOptions);
