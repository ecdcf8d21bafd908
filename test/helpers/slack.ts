import fs from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';

// A stand-in for Slack's Web API chat.postMessage: it checks every request against the operation
// as Slack's published OpenAPI description gives it (test/fixtures/slack: its parameters, their
// types, which are required, the content types it consumes), and the bot token as
// `Authorization: Bearer`. A request it finds wrong is answered as Slack answers one,
// 200 with `ok: false` (`invalid_arg_name`, `not_authed`...), and its problems are kept for the
// test to show. What it answers a right request is the test's to choose (ok, an error, a 5xx).

const SPEC_FILE = new URL('../fixtures/slack/chat-postMessage.openapi.json', import.meta.url);

interface Parameter {
  in: string;
  name: string;
  type: string;
  required?: boolean;
  description?: string;
}

interface Operation {
  consumes: string[];
  parameters: Parameter[];
}

function operation(): Operation {
  const spec = JSON.parse(fs.readFileSync(SPEC_FILE, 'utf8')) as { basePath: string; paths: Record<string, { post: Operation }> };
  const op = spec.paths['/chat.postMessage']?.post;
  if (!op) throw new Error('the fixture has no chat.postMessage');
  return op;
}

export interface SlackRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What is wrong with a chat.postMessage request by the published operation: empty when nothing is. */
export function postMessageProblems(request: SlackRequest, token: string): string[] {
  const op = operation();
  const problems: string[] = [];
  if (request.method !== 'POST') problems.push(`method ${request.method}, not POST`);
  if (request.path !== '/api/chat.postMessage') problems.push(`path ${request.path}`);
  // The operation's `token` header parameter: Slack takes it as a bearer token.
  const tokenParameter = op.parameters.find((p) => p.in === 'header' && p.name === 'token');
  if (tokenParameter?.required && request.headers.authorization !== `Bearer ${token}`) problems.push('no Authorization: Bearer with the bot token');
  const type =
    String(request.headers['content-type'] ?? '')
      .split(';')[0]
      ?.trim() ?? '';
  if (!op.consumes.includes(type)) problems.push(`content-type ${type}, not one of ${op.consumes.join(', ')}`);
  if (type !== 'application/json') return problems;
  let body: unknown;
  try {
    body = JSON.parse(request.body);
  } catch {
    return [...problems, 'a body that is not JSON'];
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return [...problems, 'a body that is not an object'];
  const fields = op.parameters.filter((p) => p.in === 'formData');
  for (const field of fields) if (field.required && !(field.name in body)) problems.push(`no ${field.name}`);
  for (const [name, value] of Object.entries(body)) {
    const field = fields.find((p) => p.name === name);
    if (!field) {
      problems.push(`an argument chat.postMessage does not take: ${name}`);
      continue;
    }
    // "A JSON-based array ... presented as a URL-encoded string": in a JSON body, the array itself.
    const jsonArray = field.description?.startsWith('A JSON-based array') === true;
    const fits = jsonArray ? Array.isArray(value) || typeof value === 'string' : typeof value === field.type;
    if (!fits) problems.push(`${name} is ${typeof value}, not ${jsonArray ? 'an array' : field.type}`);
  }
  const given = body as { text?: unknown; blocks?: unknown; attachments?: unknown };
  if (given.text === undefined && given.blocks === undefined && given.attachments === undefined) problems.push('no text, blocks or attachments');
  return problems;
}

export interface SlackAnswer {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export interface SlackApi {
  /** The base URL to give PROCTOR_SLACK_API_URL. */
  url: string;
  requests: SlackRequest[];
  /** Each request's problems by the published operation, in order. */
  problems: string[][];
  /** The next requests are answered so, in order (then `ok: true` again). */
  answerNext(...answers: SlackAnswer[]): void;
  close(): Promise<void>;
}

/** A stand-in Slack Web API on 127.0.0.1 for the app whose bot token is `token`. */
export async function startSlackApi(token: string): Promise<SlackApi> {
  const requests: SlackRequest[] = [];
  const problems: string[][] = [];
  const queued: SlackAnswer[] = [];
  let ts = 1_700_000_000;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { method: req.method ?? '', path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(request);
      const wrong = postMessageProblems(request, token);
      problems.push(wrong);
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(body));
      if (wrong.length > 0) return json(200, { ok: false, error: wrong.some((p) => p.startsWith('no Authorization')) ? 'not_authed' : 'invalid_arg_name' });
      const answer = queued.shift();
      if (answer) return json(answer.status, answer.body, answer.headers);
      const channel = (JSON.parse(request.body) as { channel: string }).channel;
      ts++;
      json(200, { ok: true, channel, ts: `${ts}.000100`, message: { type: 'message', text: 'posted', ts: `${ts}.000100` } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/api`,
    requests,
    problems,
    answerNext: (...answers) => queued.push(...answers),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
