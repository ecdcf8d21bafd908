import fs from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import type { FormatsPlugin } from 'ajv-formats';
import draft06 from 'ajv/dist/refs/json-schema-draft-06.json' with { type: 'json' };

// A stand-in for a Microsoft Teams Workflows webhook (the "When a Teams webhook request is received"
// trigger): it takes a POST of JSON to /workflows/ID/triggers/manual/paths/invoke with the query
// the trigger's URL carries and its signature `sig`, whose body is a message with one Adaptive Card
// attachment, and checks every card against Microsoft's published Adaptive Card schema 1.5
// (test/fixtures/adaptive-cards). A request it finds wrong is answered 400 (401 for a wrong
// signature) and its problems are kept, for the test to show.

const SCHEMA_FILE = new URL('../fixtures/adaptive-cards/adaptive-card-1.5.json', import.meta.url);

// ajv-formats is CommonJS whose export is the plugin itself.
const addFormats = createRequire(import.meta.url)('ajv-formats') as FormatsPlugin;

let validateCard: ValidateFunction | null = null;

/** The card validator: the published draft-06 schema, its `id` given to Ajv as `$id`, every format checked. */
function cardValidator(): ValidateFunction {
  if (validateCard) return validateCard;
  const { id, ...schema } = JSON.parse(fs.readFileSync(SCHEMA_FILE, 'utf8')) as { id: string } & Record<string, unknown>;
  // strict: false, as the schema carries keywords of its own (`version`, `examples` in places Ajv's strict mode refuses).
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addMetaSchema(draft06);
  addFormats(ajv);
  validateCard = ajv.compile({ ...schema, $id: id });
  return validateCard;
}

/** What is wrong with an Adaptive Card by the schema: empty when nothing is. */
export function cardProblems(card: unknown): string[] {
  const validate = cardValidator();
  if (validate(card)) return [];
  return (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`);
}

/** What is wrong with a request to a Workflows webhook, its body as sent: empty when nothing is. */
export function workflowsRequestProblems(request: { method: string; path: string; headers: IncomingHttpHeaders; body: string }, sig: string): string[] {
  const problems: string[] = [];
  if (request.method !== 'POST') problems.push(`method ${request.method}, not POST`);
  const url = new URL(request.path, 'http://workflows.invalid');
  if (!/^\/workflows\/[\w-]+\/triggers\/manual\/paths\/invoke$/.test(url.pathname)) problems.push(`path ${url.pathname}`);
  for (const name of ['api-version', 'sp', 'sv']) if (!url.searchParams.get(name)) problems.push(`query without ${name}`);
  if (url.searchParams.get('sig') !== sig) problems.push('a wrong sig');
  if (!/^application\/json\b/.test(request.headers['content-type'] ?? '')) problems.push(`content-type ${request.headers['content-type']}`);
  let body: unknown;
  try {
    body = JSON.parse(request.body);
  } catch {
    return [...problems, 'a body that is not JSON'];
  }
  const message = body as { type?: unknown; attachments?: unknown };
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return [...problems, 'a body that is not an object'];
  const extra = Object.keys(message).filter((key) => key !== 'type' && key !== 'attachments');
  if (extra.length > 0) problems.push(`fields besides type and attachments: ${extra.join(', ')}`);
  if (message.type !== 'message') problems.push(`type ${JSON.stringify(message.type)}, not "message"`);
  if (!Array.isArray(message.attachments) || message.attachments.length !== 1) return [...problems, 'not exactly one attachment'];
  const attachment = message.attachments[0] as { contentType?: unknown; contentUrl?: unknown; content?: unknown };
  if (attachment.contentType !== 'application/vnd.microsoft.card.adaptive') problems.push(`contentType ${JSON.stringify(attachment.contentType)}`);
  if (attachment.contentUrl !== undefined && attachment.contentUrl !== null) problems.push('a contentUrl');
  problems.push(...cardProblems(attachment.content).map((problem) => `card: ${problem}`));
  return problems;
}

export interface WorkflowsRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** What the stand-in found wrong with it: empty when it was taken. */
  problems: string[];
}

export interface TeamsWorkflow {
  /** The trigger's URL, as Teams' Workflows app gives it: its query signed with `sig`. */
  url: string;
  sig: string;
  requests: WorkflowsRequest[];
  /** The cards of the requests taken, in order. */
  cards(): { body: { type: string; text: string }[]; actions: { type: string; title: string; url: string }[]; version: string }[];
  /** The next `count` requests are answered `status` (then 202 again). */
  failNext(count: number, status?: number): void;
  close(): Promise<void>;
}

export async function startTeamsWorkflow(): Promise<TeamsWorkflow> {
  const sig = `SiG-${Math.random().toString(36).slice(2, 12)}`;
  const requests: WorkflowsRequest[] = [];
  let failing = 0;
  let failStatus = 500;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received = { method: req.method ?? '', path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      const problems = workflowsRequestProblems(received, sig);
      requests.push({ ...received, problems });
      if (failing > 0) {
        failing--;
        res.writeHead(failStatus, { 'content-type': 'application/json' }).end('{"error":{"code":"Busy"}}');
      } else if (problems.length > 0) {
        res.writeHead(problems.includes('a wrong sig') ? 401 : 400, { 'content-type': 'application/json' }).end(JSON.stringify({ problems }));
      } else {
        // The Workflows trigger accepts the request and runs the flow later.
        res.writeHead(202).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/workflows/0f1e2d3c4b5a69788796a5b4c3d2e1f0/triggers/manual/paths/invoke?api-version=1&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=${sig}`,
    sig,
    requests,
    cards: () =>
      requests
        .filter((r) => r.problems.length === 0)
        .map((r) => (JSON.parse(r.body) as { attachments: { content: ReturnType<TeamsWorkflow['cards']>[number] }[] }).attachments[0]!.content),
    failNext: (count, status = 500) => {
      failing = count;
      failStatus = status;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
