import { createServer, type Server } from 'node:http';
import { type AppInput, createApp } from './app.ts';
import type { Config } from './config.ts';
import { openStorage } from './storage/open.ts';

/** HTTP being served, by this process or by its workers. */
export interface Serving {
  port: number;
  /** Stops accepting connections and resolves once the requests under way have been answered. */
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/**
 * The API served from this process (in a cluster worker, the port is shared with the others), its
 * files kept where the configuration says.
 */
export async function serveApp(config: Config, deps: Omit<AppInput, 'config' | 'storage'>): Promise<Serving> {
  const { app } = createApp({ ...deps, config, storage: await openStorage(config) });
  const httpServer = createServer(app);
  const port = await listen(httpServer, config.port, config.host);
  let closing: Promise<void> | null = null;
  return {
    port,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeIdleConnections();
      })),
  };
}
