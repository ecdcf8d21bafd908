import { parentPort, workerData } from 'node:worker_threads';
import { type PgliteOptions, servePglite } from './embedded-pglite.ts';

// The embedded database's thread (startEmbeddedThread in embedded.ts): PGlite runs every statement
// on the thread that calls it, so a server runs it here, and its own thread, with the requests, only
// speaks the wire protocol over the socket (docs/decisions/embedded-database-thread.md).

/** The thread's one message: it listens (on `port` when TCP). It ends once closed, or fails with an error. */
export interface ListeningMessage {
  type: 'listening';
  port: number | null;
}

/** The parent's one message: close the socket and then PGlite (its last writes reach the disk), then end. */
export interface CloseMessage {
  type: 'close';
}

async function run(options: PgliteOptions): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('embedded-worker.ts runs as a worker thread (see startEmbeddedThread)');
  const served = await servePglite(options);
  port.once('message', (_message: CloseMessage) => {
    void (async () => {
      await served.close();
      // Nothing is left to keep the thread: it ends, and the parent's close resolves on its exit.
      port.close();
    })();
  });
  port.postMessage({ type: 'listening', port: served.port } satisfies ListeningMessage);
}

await run(workerData as PgliteOptions);
