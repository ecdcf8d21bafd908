import net from 'node:net';

// Request bodies that do not arrive whole, sent over a raw socket (fetch cannot stop halfway):
// cut (the client says it has sent everything, short of what it announced), abandoned (the client
// goes away mid-body, as a cancelled CI job does) and stalled (the client stops sending and waits).

export type BrokenBody = 'cut' | 'abandoned' | 'stalled';

export interface BrokenAnswer {
  /** The status the server answered with, or null when it closed the connection without one. */
  status: number | null;
  /** Milliseconds from the last byte sent to the answer or the close. */
  ms: number;
}

/**
 * Sends `method url` with `headers` announcing `body`'s length, then `sent` bytes of it, and then
 * breaks off as `how` says. Resolves with what the server did, or rejects after `hangMs` with
 * neither an answer nor a close (an abandoned body resolves at once: nobody is there to answer).
 */
export function sendBroken(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: Buffer,
  sent: number,
  how: BrokenBody,
  hangMs = 10_000,
): Promise<BrokenAnswer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: target.hostname, port: Number(target.port) });
    let answer = '';
    let sentAt = 0;
    let settled = false;
    const settle = (outcome: BrokenAnswer | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const status = () => {
      const match = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      return match ? Number(match[1]) : null;
    };
    const timer = setTimeout(() => settle(new Error(`${how} ${method} ${target.pathname}: no answer and no close in ${hangMs} ms`)), hangMs);
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      // The head is enough: whether the body follows is the server's business.
      if (answer.includes('\r\n\r\n')) settle({ status: status(), ms: Date.now() - sentAt });
    });
    socket.on('error', () => settle({ status: status(), ms: Date.now() - sentAt }));
    socket.on('close', () => settle({ status: status(), ms: Date.now() - sentAt }));
    socket.on('connect', () => {
      const head = [
        `${method} ${target.pathname}${target.search} HTTP/1.1`,
        `host: ${target.host}`,
        ...Object.entries({ ...headers, 'content-length': String(body.length) }).map(([name, value]) => `${name}: ${value}`),
        '',
        '',
      ].join('\r\n');
      socket.write(head);
      socket.write(body.subarray(0, sent), () => {
        sentAt = Date.now();
        if (how === 'cut') socket.end();
        else if (how === 'abandoned') setTimeout(() => settle({ status: null, ms: 0 }), 50);
      });
    });
  });
}

/** A multipart/form-data body of files, as `proctor-ci upload junit` sends it. */
export function multipartBody(files: { name: string; content: string }[], boundary = 'proctor-test-boundary'): { body: Buffer; contentType: string } {
  const parts = files.map(
    (file) =>
      `--${boundary}\r\ncontent-disposition: form-data; name="report"; filename="${file.name}"\r\ncontent-type: application/xml\r\n\r\n${file.content}\r\n`,
  );
  return { body: Buffer.from(`${parts.join('')}--${boundary}--\r\n`), contentType: `multipart/form-data; boundary=${boundary}` };
}
