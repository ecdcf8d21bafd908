import { createServer } from 'node:http';

// A JSON API's stand-in on loopback (GitHub's, GitLab's): every request recorded, in order, and
// answered as `answer` says.

export interface StandInRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

export interface StandIn {
  /** `http://127.0.0.1:PORT`. */
  origin: string;
  requests: StandInRequest[];
  close(): Promise<void>;
}

export async function startJsonStandIn(
  answer: (request: StandInRequest) => [status: number, body: unknown],
  contentType = 'application/json',
): Promise<StandIn> {
  const requests: StandInRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in.invalid');
      const text = Buffer.concat(chunks).toString('utf8');
      const request: StandInRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: text ? JSON.parse(text) : undefined,
      };
      requests.push(request);
      const [status, payload] = answer(request);
      res.writeHead(status, { 'content-type': contentType }).end(JSON.stringify(payload));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
