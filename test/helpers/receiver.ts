import { createServer, type IncomingHttpHeaders } from 'node:http';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  /** Every request, in order, answered or not. */
  requests: Received[];
  /** The next `count` requests are answered with `status` (then 200 again). */
  failNext(count: number, status?: number): void;
  /** The next `count` requests are recorded and never answered. */
  holdNext(count: number): void;
  close(): Promise<void>;
}

/** An HTTP receiver on loopback that records every request and answers 200 (or, when told, an error). */
export async function startReceiver(): Promise<Receiver> {
  const requests: Received[] = [];
  let failing = 0;
  let failStatus = 500;
  let holding = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (holding > 0) {
        holding--;
        return;
      }
      if (failing > 0) {
        failing--;
        res.writeHead(failStatus, { 'content-type': 'text/plain' }).end('the receiver is down');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    failNext: (count, status = 500) => {
      failing = count;
      failStatus = status;
    },
    holdNext: (count) => {
      holding = count;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
