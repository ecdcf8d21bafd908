import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokenBody, multipartBody, sendBroken } from '../helpers/bodies.ts';
import { seedEnvironment, seedProject, startTestServer, type TestServer } from '../helpers/server.ts';

/**
 * Bad input for every operation the server documents, generated from its own OpenAPI document:
 * path params, query values and bodies of every shape, as a careless or hostile client sends them.
 * Whatever comes, the answer is not a 5xx and it comes.
 */
const REQUESTS_PER_OPERATION = Number(process.env.FUZZ_REQUESTS_PER_OPERATION ?? 200);
const HANG_MS = 10_000;
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);

interface Operation {
  method: string;
  route: string;
  query: string[];
  bodySchema: JsonSchema | null;
}

interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
}

interface Parameter {
  name: string;
  in: string;
}

interface DocumentOperation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: { $ref?: string; properties?: Record<string, unknown> } }> };
}

let server: TestServer;
let key: string;
let operations: Operation[];
/** The streamed bodies' spools go here (os.tmpdir() reads TMPDIR), so that one left behind is seen. */
let tmpDir: string;
const savedTmp = process.env.TMPDIR;
const UPLOAD_IDLE_S = 1;

let components: Record<string, JsonSchema> = {};

function resolve(schema: JsonSchema): JsonSchema {
  return schema.$ref ? resolve(components[schema.$ref.split('/').at(-1) as string] ?? {}) : schema;
}

beforeAll(async () => {
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-fuzz-tmp-'));
  process.env.TMPDIR = tmpDir;
  server = await startTestServer({ env: { PROCTOR_UPLOAD_IDLE_S: String(UPLOAD_IDLE_S) } });
  const project = await seedProject(server.sql);
  key = project.key;
  await seedEnvironment(server.sql, project.projectId, 'staging');
  const document = await (await fetch(`${server.url}/api/openapi.json`)).json();
  components = document.components?.schemas ?? {};
  operations = Object.entries(document.paths as Record<string, Record<string, DocumentOperation>>).flatMap(([route, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      route,
      query: (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
      bodySchema: (operation.requestBody?.content?.['application/json']?.schema as JsonSchema | undefined) ?? null,
    })),
  );
});
afterAll(async () => {
  await server?.close();
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  fs.rmSync(tmpDir, { recursive: true, force: true });
});

const nasty = fc.constantFrom(
  '',
  ' ',
  '0',
  '-1',
  '1.5',
  '1e3',
  '0x1F',
  '2147483648',
  '99999999999999999999',
  'NaN',
  'null',
  '%00',
  '../..',
  '\u0000',
  '\ud83d',
  'a'.repeat(5000),
  '0000-01-01',
  '9999-12-31T23:59:60Z',
  '[]',
  '{}',
);
const text = fc.oneof(nasty, fc.string({ maxLength: 40 }), fc.integer().map(String), fc.constant('1'));
const jsonValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), nasty, fc.integer(), fc.double(), fc.constant(null), fc.array(nasty, { maxLength: 3 }));

/**
 * Values of the schema's shape, most of them valid, some at or past its edges, and now and then
 * anything at all: bad input that gets past the first check reaches the code behind it.
 */
function shaped(raw: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(raw);
  const variants = schema.anyOf ?? schema.oneOf ?? schema.allOf;
  if (variants) return fc.oneof(...variants.map((v) => shaped(v, depth)));
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const pick = (type: string | undefined): fc.Arbitrary<unknown> => {
    if (schema.enum) return fc.constantFrom(...schema.enum);
    switch (type) {
      case 'string':
        if (schema.format === 'date-time')
          return fc.oneof(
            fc.date({ min: new Date(-62198755200000), max: new Date(253402300799000), noInvalidDate: true }).map((d) => d.toISOString()),
            fc.constantFrom(
              '0000-01-01T00:00:00Z',
              '0001-01-01T00:00:00+05:00',
              '9999-12-31T23:59:59-05:00',
              '2026-02-30T00:00:00Z',
              // Offsets past PostgreSQL's ±15:59, and the year 0000 that an offset moves into the year 1.
              '2026-11-28T10:00:00+16:00',
              '2026-11-28T10:00:00-23:59',
              '0000-12-31T23:00:00-02:00',
            ),
          );
        if (schema.pattern) return fc.oneof({ weight: 4, arbitrary: fc.stringMatching(new RegExp(schema.pattern)) }, { weight: 1, arbitrary: text });
        return fc.oneof(fc.string({ maxLength: 30 }), nasty);
      case 'integer':
        return fc.oneof(fc.integer({ min: schema.minimum ?? -(2 ** 31), max: schema.maximum ?? 2 ** 31 }), fc.constantFrom(0, -1, 2 ** 31, 2 ** 53));
      case 'number':
        return fc.oneof(fc.double({ noNaN: true }), fc.integer());
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return depth > 3 ? fc.constant([]) : fc.array(shaped(schema.items ?? {}, depth + 1), { minLength: 1, maxLength: 3 });
      case 'object':
        if (depth > 3 || !schema.properties) return fc.dictionary(fc.string({ maxLength: 8 }), jsonValue, { maxKeys: 3 });
        return fc.record(Object.fromEntries(Object.entries(schema.properties).map(([name, property]) => [name, shaped(property, depth + 1)])), {
          requiredKeys: (schema.required ?? []).filter((name) => name in (schema.properties ?? {})),
        });
      default:
        return jsonValue;
    }
  };
  return fc.oneof(
    { weight: 19, arbitrary: types.length > 1 ? fc.oneof(...types.map(pick)) : pick(types[0] ?? (schema.properties ? 'object' : undefined)) },
    { weight: 1, arbitrary: jsonValue },
  );
}

interface FuzzRequest {
  path: string;
  query: string;
  body: string | undefined;
  /** Headers beside the bearer key, or instead of it: null sends the key alone, as a client would. */
  headers: Record<string, string> | null;
}

/** A header's value as HTTP carries it: visible ASCII and spaces, never a line break. */
const headerText = text.map((value) => value.replace(/[^\x20-\x7e]/g, '').slice(0, 2000));

/** Session cookies as a browser may hold them: planted from a sibling subdomain, cut, mis-encoded, huge. */
const cookie = fc.oneof(
  fc.constantFrom(
    'proctor_session=%',
    'proctor_session=%E0%A4%A',
    'proctor_session=%ZZ',
    'proctor_session=%00',
    `proctor_session=${'a'.repeat(6000)}`,
    'proctor_session="unterminated',
    'proctor_session=; proctor_session=%',
    '=; ;;=',
    'proctor_oidc=%; proctor_session=%C0%AF',
    'proctor_session',
  ),
  headerText.map((value) => `proctor_session=${value}`),
);

/** Headers a careless or hostile client sends: a broken cookie instead of a key, odd keys, types and encodings. */
const chaoticHeaders = (key: string) =>
  fc.record(
    {
      cookie,
      authorization: fc.constantFrom(`Bearer ${key}`, 'Bearer', 'Bearer  ', 'Basic dXNlcjpwYXNz', 'Bearer prc_p_1_x', `Bearer ${'x'.repeat(5000)}`, 'bearer\t'),
      'x-project-id': headerText,
      'x-csrf-token': headerText,
      'content-type': fc.constantFrom(
        'application/json',
        'application/json; charset=latin1',
        'application/json; charset=utf-16',
        'text/plain',
        'multipart/form-data; boundary=x',
        ';;',
      ),
      'content-encoding': fc.constantFrom('gzip', 'br', 'deflate', 'identity', 'x-unknown'),
      accept: fc.constantFrom('text/html', 'application/json', '*/*', ''),
      'accept-language': headerText,
    },
    { requiredKeys: [] },
  );

function requestsFor(operation: Operation): fc.Arbitrary<FuzzRequest> {
  const pathParams = [...operation.route.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
  const queryNames = [...operation.query, 'unexpected'];
  return fc
    .record({
      params: fc.tuple(...pathParams.map(() => text)),
      query: fc.dictionary(fc.constantFrom(...queryNames), text, { maxKeys: 4 }),
      body: fc.oneof(
        { weight: 8, arbitrary: shaped(operation.bodySchema ?? {}).map((value) => JSON.stringify(value)) },
        { weight: 1, arbitrary: jsonValue.map((value) => JSON.stringify(value)) },
        { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
      ),
      headers: fc.oneof({ weight: 2, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: chaoticHeaders(key) }),
    })
    .map(({ params, query, body, headers }) => {
      let index = 0;
      const path = operation.route.replace(/\{\w+\}/g, () => pathSegment(params[index++] as string));
      return { path, query: new URLSearchParams(query).toString(), body: operation.bodySchema ? body : undefined, headers };
    });
}

/** A path segment as sent: a lone surrogate, which has no UTF-8, goes as the bytes of one (invalid UTF-8). */
function pathSegment(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return `%ED%A0%BD${encodeURIComponent(value.replace(/[\uD800-\uDFFF]/g, ''))}`;
  }
}

async function send(operation: Operation, request: FuzzRequest): Promise<number | 'hang'> {
  const headers = request.headers ?? { authorization: `Bearer ${key}`, ...(request.body === undefined ? {} : { 'content-type': 'application/json' }) };
  try {
    const response = await fetch(`${server.url}${request.path}${request.query ? `?${request.query}` : ''}`, {
      method: operation.method,
      headers,
      redirect: 'manual',
      body: request.body,
      signal: AbortSignal.timeout(HANG_MS),
    });
    // A live run's stream stays open while its run is under way: answered once its headers come.
    if (response.ok && response.headers.get('content-type')?.startsWith('text/event-stream')) {
      await response.body?.cancel();
      return response.status;
    }
    await response.arrayBuffer();
    return response.status;
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') return 'hang';
    throw error;
  }
}

describe('fuzzing every documented operation', () => {
  it(`when each operation gets ${REQUESTS_PER_OPERATION} generated bad requests, then none is answered 5xx and none hangs`, async () => {
    expect(operations.length).toBeGreaterThan(20);
    const failures: string[] = [];
    let sent = 0;
    for (const [i, operation] of operations.entries()) {
      const requests = fc.sample(requestsFor(operation), { numRuns: REQUESTS_PER_OPERATION, seed: SEED + i });
      // Four at a time: enough to overlap, not so many that a slow answer reads as a hang.
      for (let start = 0; start < requests.length; start += 4) {
        const batch = requests.slice(start, start + 4);
        const statuses = await Promise.all(batch.map((request) => send(operation, request)));
        sent += batch.length;
        statuses.forEach((status, j) => {
          if (status === 'hang' || status >= 500) {
            failures.push(
              `${status} ${operation.method} ${batch[j]?.path}?${batch[j]?.query} ${JSON.stringify(batch[j]?.headers)?.slice(0, 300)} ${batch[j]?.body?.slice(0, 200) ?? ''}`,
            );
          }
        });
      }
    }
    console.log(
      `fuzz: ${sent} generated requests over ${operations.length} operations and pages (${REQUESTS_PER_OPERATION} each, a third with malformed cookies and headers): ${failures.filter((f) => !f.startsWith('hang')).length} × 5xx, ${failures.filter((f) => f.startsWith('hang')).length} hangs`,
    );
    expect(failures.slice(0, 20)).toEqual([]);
  }, 600_000);
});

/** Every route that streams its request body rather than reading it as JSON first. */
interface StreamedRoute {
  method: string;
  /** A fresh target for each request (a signed URL is used up by a stored upload). */
  target(): Promise<{ url: string; headers: Record<string, string>; body: Buffer }>;
}

const xml = `<testsuite name="s">\n${Array.from({ length: 2000 }, (_, i) => `<testcase classname="c" name="t${i}" time="0.001"/>`).join('\n')}\n</testsuite>\n`;

async function streamedRoutes(): Promise<Record<string, StreamedRoute>> {
  // A project of its own: the generated requests before may have changed the first one's settings or revoked its key.
  const own = await seedProject(server.sql);
  await seedEnvironment(server.sql, own.projectId, 'staging');
  const authorization = `Bearer ${own.key}`;
  const reported = await fetch(`${server.url}/api/test-runs/report`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ environment: 'staging', total_shards: 1 }),
  });
  const run = await reported.json();
  expect(reported.ok, JSON.stringify(run)).toBe(true);
  const runId = run.data.test_run.id as number;
  const bytes = Buffer.alloc(256 * 1024, 7);
  let n = 0;
  return {
    'POST /api/test-runs/junit': {
      method: 'POST',
      target: async () => {
        const { body, contentType } = multipartBody([{ name: 'report.xml', content: xml }]);
        return {
          url: `${server.url}/api/test-runs/junit?environment=staging&run_key=broken-${n++}`,
          headers: { authorization, 'content-type': contentType },
          body,
        };
      },
    },
    'PUT /artifacts/{id}/upload': {
      method: 'PUT',
      target: async () => {
        // Bytes of their own each time: a blob already stored would be answered without reading the body.
        const body = Buffer.concat([bytes, Buffer.from(String(n++))]);
        const declared = await fetch(`${server.url}/api/test-runs/${runId}/attachments`, {
          method: 'POST',
          headers: { authorization, 'content-type': 'application/json' },
          body: JSON.stringify({
            attachments: [
              {
                test_id: 'aaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbbbbbb',
                retry: 0,
                name: `blob-${n}`,
                content_type: 'application/octet-stream',
                sha256: createHash('sha256').update(body).digest('hex'),
                size_bytes: body.length,
              },
            ],
          }),
        }).then((response) => response.json());
        const url = new URL(declared.data.attachments[0].upload_url as string, `${server.url}/`).toString();
        return { url, headers: { 'content-type': 'application/octet-stream' }, body };
      },
    },
    'PUT /files/{id}/upload': {
      method: 'PUT',
      target: async () => {
        const created = await fetch(`${server.url}/api/resources`, {
          method: 'POST',
          headers: { authorization, 'content-type': 'application/json' },
          body: JSON.stringify({ project_id: own.projectId, name: `file-${n++}.bin`, mime_type: 'application/octet-stream', size_bytes: bytes.length }),
        }).then((response) => response.json());
        return { url: created.data.resource.upload_url as string, headers: { 'content-type': 'application/octet-stream' }, body: bytes };
      },
    },
  };
}

/** Files a broken upload may leave: a storage write's `.partial`, a JUnit upload's spool. */
function leftovers(): string[] {
  const partial = fs
    .readdirSync(server.filesDir, { recursive: true })
    .map(String)
    .filter((name) => name.endsWith('.partial'));
  return [...partial, ...fs.readdirSync(tmpDir).filter((name) => name.startsWith('proctor-upload-'))];
}

describe('bodies that break off, on every streamed route', () => {
  it('when each streamed route gets cut, stalled and abandoned bodies, then none is answered 5xx or hangs, nothing is left behind, and the server answers after', async () => {
    const routes = await streamedRoutes();
    // Every operation the document says takes a body other than JSON is among them.
    const document = await (await fetch(`${server.url}/api/openapi.json`)).json();
    const notJson = Object.entries(document.paths as Record<string, Record<string, DocumentOperation>>).flatMap(([route, methods]) =>
      Object.entries(methods)
        .filter(([, operation]) => Object.keys(operation.requestBody?.content ?? {}).some((type) => type !== 'application/json'))
        .map(([method]) => `${method.toUpperCase()} ${route}`),
    );
    expect(Object.keys(routes)).toEqual(expect.arrayContaining(notJson));
    const failures: string[] = [];
    const kinds: BrokenBody[] = ['cut', 'stalled', 'abandoned'];
    let sent = 0;
    for (const [name, route] of Object.entries(routes)) {
      for (const how of kinds) {
        const targets = await Promise.all(Array.from({ length: 5 }, () => route.target()));
        const answers = await Promise.all(
          targets.map(({ url, headers, body }, i) =>
            sendBroken(url, route.method, headers, body, Math.floor((body.length * (i + 1)) / 7), how, (UPLOAD_IDLE_S + 20) * 1000).catch(
              (error: Error) => error,
            ),
          ),
        );
        sent += answers.length;
        for (const answer of answers) {
          if (answer instanceof Error) failures.push(`${name}: ${answer.message}`);
          else if (answer.status !== null && answer.status >= 500) failures.push(`${name} ${how}: HTTP ${answer.status}`);
        }
        expect((await fetch(`${server.url}/healthz`)).status, `${name} ${how}`).toBe(200);
      }
    }
    // What an upload removes as it stops: give the last removals a moment.
    for (let i = 0; i < 50 && leftovers().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    console.log(`fuzz: ${sent} broken bodies (cut, stalled, abandoned) on ${Object.keys(routes).length} streamed routes: ${failures.length} failures`);
    expect(failures).toEqual([]);
    expect(leftovers()).toEqual([]);
    // And each route still takes a whole body.
    for (const [name, route] of Object.entries(routes)) {
      const { url, headers, body } = await route.target();
      const response = await fetch(url, { method: route.method, headers, body: new Uint8Array(body) });
      expect(response.status, `${name}: ${await response.text()}`).toBe(200);
    }
  }, 300_000);
});
