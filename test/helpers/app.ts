import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AppInput, createApp } from '../../server/src/app.ts';
import { keepIdleConnectionsLonger } from '../../server/src/serving.ts';

export interface InProcessServer {
  url: string;
  close(): Promise<void>;
}

/**
 * The app served from this process on a port of its own on 127.0.0.1, its config's public URL set
 * to it: how tests and benches serve Proctor in-process. `wrap` puts a handler in front (a bench's
 * static baseline on the same server).
 */
export async function serveInProcess(input: AppInput, wrap?: (app: RequestListener) => RequestListener): Promise<InProcessServer> {
  const { app } = createApp(input);
  const server = createServer(wrap ? wrap(app) : app);
  // As `proctor serve` does: under load, a test's client and its in-process server would otherwise
  // race to close an idle connection, and a request sent on it fails with ECONNRESET.
  keepIdleConnectionsLonger(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  input.config.publicUrl = url;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
