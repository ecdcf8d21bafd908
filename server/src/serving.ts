import { endLiveStreams } from './runs/index.ts';
import { createServer, type Server } from 'node:http';
import net from 'node:net';
import { type AppInput, createApp } from './app.ts';
import type { Config, MetricsSettings } from './config.ts';
import { nodeMetrics } from './metrics.ts';
import { openStorage } from './storage/open.ts';

/** HTTP being served, by this process or by its workers. */
export interface Serving {
  port: number;
  /** Stops accepting connections and resolves once the requests under way have been answered. */
  close(): Promise<void>;
}

/** The configured port is taken: said in one line, before anything touched the data directory. */
export class PortInUseError extends Error {
  constructor(port: number, host: string) {
    super(`port ${port} on ${host} is already in use by another process: stop it, or set PORT to a free port`);
  }
}

function listenError(error: unknown, port: number, host: string): unknown {
  return (error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? new PortInUseError(port, host) : error;
}

/** Fails with PortInUseError when the port is taken; a server starts with this before it opens its data. */
export async function checkPortFree(port: number, host: string): Promise<void> {
  if (port === 0) return;
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error) => reject(listenError(error, port, host)));
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const failed = (error: Error) => reject(listenError(error, port, host));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

const KEEP_ALIVE_MS = 65_000;

/**
 * A client that reuses an idle connection at the moment the server closes it sees the request
 * fail ("socket hang up", ECONNRESET). Node's own clients let an idle connection go after 4-5 s,
 * the server's default too; the server keeps it longer, so that a client is always the one to let
 * it go.
 */
export function keepIdleConnectionsLonger(httpServer: Server): void {
  httpServer.keepAliveTimeout = KEEP_ALIVE_MS;
  httpServer.headersTimeout = KEEP_ALIVE_MS + 1000;
}

/**
 * The API served from this process (in a cluster worker, the port is shared with the others), its
 * files kept where the configuration says.
 */
export async function serveApp(config: Config, deps: Omit<AppInput, 'config' | 'storage'>): Promise<Serving> {
  const { app } = createApp({ ...deps, config, storage: await openStorage(config) });
  const httpServer = createServer(app);
  keepIdleConnectionsLonger(httpServer);
  return serving(httpServer, await listen(httpServer, config.port, config.host));
}

/** A listening server, closed once however often it is asked (idle keep-alive connections at once). */
function serving(httpServer: Server, port: number): Serving {
  let closing: Promise<void> | null = null;
  return {
    port,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeIdleConnections();
        // A live run's stream would hold the close open for good: its client reconnects to another process.
        endLiveStreams();
      })),
  };
}

/**
 * The node's Prometheus metrics, `GET /metrics` on a listener of its own (PROCTOR_METRICS_PORT,
 * on loopback unless PROCTOR_METRICS_HOST says): apart from the API, so that no proxy in front of
 * it serves them and the API's port never answers them. Anything else is a 404.
 */
export async function serveMetrics(settings: MetricsSettings): Promise<Serving> {
  const httpServer = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the metrics are at GET /metrics\n');
      return;
    }
    nodeMetrics().then(
      ({ contentType, text }) => res.writeHead(200, { 'content-type': contentType }).end(text),
      (error: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${(error as Error).message}\n`),
    );
  });
  return serving(httpServer, await listen(httpServer, settings.port, settings.host));
}
