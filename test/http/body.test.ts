import http from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedProject, startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  key = (await seedProject(server.sql)).key;
});
afterAll(async () => server?.close());

/** One socket for every request, so a test can tell that an answer left the connection usable. */
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
afterAll(() => agent.destroy());

interface Answer {
  status: number;
  body: any;
  reusedSocket: boolean;
}

function post(path: string, body: Buffer | string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${server.url}${path}`,
      { method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : null, reusedSocket: request.reusedSocket }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

let slugs = 0;
const environment = () => JSON.stringify({ name: 'Staging', slug: `staging-${++slugs}` });

describe('request bodies', () => {
  it.each([
    ['gzip', gzipSync],
    ['x-gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ])('when a body comes %s encoded, then it is read as the JSON it encodes', async (encoding, encode) => {
    const answer = await post('/api/environments', encode(Buffer.from(environment())), { 'content-encoding': encoding });
    expect(answer.status).toBe(201);
    expect(answer.body.data.environment.name).toBe('Staging');
  });

  it('when the content encoding is unknown, then it is a 415 and the connection serves the next request', async () => {
    const refused = await post('/api/environments', Buffer.from(environment()), { 'content-encoding': 'zstd' });
    expect(refused).toMatchObject({ status: 415, body: { data: null, error: { message: 'body: unsupported content encoding' } } });
    const next = await post('/api/environments', environment(), {});
    expect(next.status).toBe(201);
    expect(next.reusedSocket).toBe(true);
  });

  it('when the charset is not UTF-8, then it is a 415 naming the charset', async () => {
    const answer = await post('/api/environments', environment(), { 'content-type': 'application/json; charset=latin1' });
    expect(answer).toMatchObject({ status: 415, body: { error: { message: 'body: unsupported charset "latin1"' } } });
    expect((await post('/api/environments', environment(), { 'content-type': 'application/json; charset=UTF-8' })).status).toBe(201);
  });

  it('when a gzip body is corrupt, then it is a 400 naming the body', async () => {
    const answer = await post('/api/environments', gzipSync(environment()).subarray(0, 12), { 'content-encoding': 'gzip' });
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toMatch(/^body: could not be decoded/);
  });

  it('when a small gzip body inflates beyond the limit, then it is a 413 and nothing is created', async () => {
    const bomb = gzipSync(JSON.stringify({ name: ' '.repeat(6 * 1024 * 1024), slug: 'bomb' }));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const answer = await post('/api/environments', bomb, { 'content-encoding': 'gzip' });
    expect(answer).toMatchObject({ status: 413, body: { error: { message: 'body: request body exceeds the size limit' } } });
    const [found] = await server.sql`select 1 from environments where slug = 'bomb'`;
    expect(found).toBeUndefined();
  });

  it('when the body is JSON but not an object or an array, then it is a 400 for malformed JSON', async () => {
    const answer = await post('/api/environments', '"staging"', {});
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toMatch(/^body: malformed JSON/);
  });

  it('when the body is not sent as JSON, then it is not read as JSON and validation names the missing field', async () => {
    const answer = await post('/api/environments', environment(), { 'content-type': 'text/plain' });
    expect(answer.status).toBe(400);
    // Validation answers in the environments routes' flat error shape.
    expect(answer.body.error).toMatch(/^body\.name: /);
  });

  it('when a gzip body holds NUL, then it is refused naming the field; an escaped backslash before u0000 is text and is kept', async () => {
    const withNul = await post('/api/environments', gzipSync(JSON.stringify({ name: 'a\u0000b', slug: 'nul' })), { 'content-encoding': 'gzip' });
    expect(withNul).toMatchObject({ status: 400, body: { error: 'body.name: must not contain the NUL character (\\u0000)' } });
    const lookalike = await post('/api/environments', gzipSync(JSON.stringify({ name: 'a\\u0000b', slug: 'lookalike' })), { 'content-encoding': 'gzip' });
    expect(lookalike.status).toBe(201);
    expect(lookalike.body.data.environment.name).toBe('a\\u0000b');
  });

  it('when text holds a lone UTF-16 surrogate (an emoji cut in half), then it is stored with U+FFFD in its place and a whole emoji is kept', async () => {
    const cut = await post('/api/environments', JSON.stringify({ name: 'cut \ud83d|whole \ud83d\ude00|low \ude00', slug: 'surrogate' }), {});
    expect(cut.status).toBe(201);
    const stored = await server.sql<{ name: string }[]>`select name from environments where slug = 'surrogate'`;
    expect(stored[0]?.name).toBe('cut \ufffd|whole \u{1f600}|low \ufffd');
    expect(cut.body.data.environment.name).toBe(stored[0]?.name);
  });
});
