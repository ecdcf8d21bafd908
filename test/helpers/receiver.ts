import { createServer, type IncomingHttpHeaders } from 'node:http';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface Receiver {
  url: string;
  port: number;
  /** Every request, in order, answered or not. */
  requests: Received[];
  /** The next `count` requests are answered with `status` and a body of the receiver's own (then 200 again). */
  failNext(count: number, status?: number): void;
  /** The next `count` requests are answered so. */
  answerNext(count: number, answer: Answer): void;
  /** The next `count` requests are recorded and never answered. */
  holdNext(count: number): void;
  close(): Promise<void>;
}

/** What a failing receiver says in its answer: an internal page a webhook must never read back. */
export const RECEIVER_ERROR_PAGE = 'the receiver is down';

/**
 * An HTTP receiver on loopback (127.0.0.1 unless another loopback address is given) that records
 * every request and answers 200 (or, when told, something else).
 */
export async function startReceiver(options: { host?: string; port?: number } = {}): Promise<Receiver> {
  const requests: Received[] = [];
  let answering = 0;
  let answer: Answer = { status: 500 };
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
      if (answering > 0) {
        answering--;
        res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers }).end(answer.body ?? RECEIVER_ERROR_PAGE);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    port: address.port,
    requests,
    failNext: (count, status = 500) => {
      answering = count;
      answer = { status };
    },
    answerNext: (count, given) => {
      answering = count;
      answer = given;
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
