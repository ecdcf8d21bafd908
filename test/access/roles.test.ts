import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAgent } from '../../server/src/agents/store.ts';
import { createAgentToken, createKey, createRunKey } from '../../server/src/auth/store.ts';
import { KEY_SCOPES, lesserRole, ROLES, type Role, roleAllows, roleOfScope } from '../../server/src/principals.ts';
import { createSession } from '../../server/src/sessions/store.ts';
import { attemptsOf, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, testId, type TestServer } from '../helpers/server.ts';

// Every documented operation, asked by every kind of credential: allowed exactly where the
// operation's x-proctor-role says, refused with a 403 naming the operation everywhere else. The
// operations and their roles are read from the OpenAPI document, so a new route cannot skip this.

interface Operation {
  method: string;
  path: string;
  role: string;
  runKey: boolean;
}

/** Who asks: headers to send, and what the table says it may do. */
interface Caller {
  name: string;
  headers: Record<string, string>;
  /** The role it acts with; null for a run's key and an agent's token. */
  role: Role | null;
  run: { runId: number; agentId: number | null } | null;
}

let server: TestServer;
let projectId: number;
let runId: number;
let otherRunId: number;
let agentId: number;
let operations: Operation[];
const callers: Caller[] = [];

const MISSING = 999_999;

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProject(server.sql);
  projectId = project.projectId;
  await seedEnvironment(server.sql, projectId, 'staging');
  const api = client(server.url, project.key);
  const report = async (key: string) => {
    const id = (await api.post('/api/test-runs/report', { environment: 'staging', run_key: key })).body.data.test_run.id as number;
    await api.post(`/api/test-runs/${id}/shards/1/begin`, { tests: [listedTest(testId(1))] });
    return id;
  };
  runId = await report('matrix-own');
  otherRunId = await report('matrix-other');
  agentId = await addAgent(server.sql, runId, 'matrix agent', new Date());

  const document = await (await fetch(`${server.url}/api/openapi.json`)).json();
  operations = Object.entries(document.paths as Record<string, Record<string, Record<string, unknown>>>).flatMap(([route, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => operation['x-proctor-role'] !== undefined)
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path: route,
        role: operation['x-proctor-role'] as string,
        runKey: operation['x-proctor-run-key'] === true,
      })),
  );

  const project_ = { 'x-project-id': String(projectId) };
  for (const role of ROLES) {
    const person = await seedUser(server.sql, [projectId], { role, scope: 'admin' });
    const { cookie, session } = await createSession(server.sql, person.userId, new Date());
    callers.push({
      name: `a ${role}'s session`,
      headers: { cookie: `proctor_session=${cookie}`, 'x-csrf-token': session.csrfToken, ...project_ },
      role,
      run: null,
    });
    for (const scope of KEY_SCOPES) {
      const { key } = await seedUser(server.sql, [projectId], { role, scope });
      callers.push({
        name: `a ${role}'s ${scope} key`,
        headers: { authorization: `Bearer ${key}`, ...project_ },
        role: lesserRole(roleOfScope(scope), role),
        run: null,
      });
    }
  }
  for (const scope of KEY_SCOPES) {
    const key = await createKey(server.sql, { projectId }, scope);
    callers.push({ name: `a project key of scope ${scope}`, headers: { authorization: `Bearer ${key}` }, role: roleOfScope(scope), run: null });
  }
  callers.push({
    name: "the run's key",
    headers: { authorization: `Bearer ${await createRunKey(server.sql, projectId, runId)}` },
    role: null,
    run: { runId, agentId: null },
  });
  callers.push({
    name: "an agent's token",
    headers: { authorization: `Bearer ${await createAgentToken(server.sql, projectId, runId, agentId)}` },
    role: null,
    run: { runId, agentId },
  });
}, 60_000);

afterAll(async () => server?.close());

/** The request an operation gets from a caller: its own run where the operation takes one, ids that exist nowhere otherwise. */
function requestOf(operation: Operation, caller: Caller, target: { runId: number; agentId: number } | null) {
  const ids: Record<string, string> = { agent: String(target?.agentId ?? MISSING), user_id: 'nobody', test_case_id: testId(1) };
  const pathOf = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name === 'id' && target && operation.path.startsWith('/api/test-runs/')) return String(target.runId);
    return ids[name] ?? String(MISSING);
  });
  // Bodies that fail validation where they are read: an allowed call changes nothing.
  const body =
    operation.path === '/api/failure-groups/{id}/members' && target
      ? { test_run_id: target.runId }
      : target
        ? { agent_id: target.agentId }
        : { unexpected: true };
  return { method: operation.method, path: pathOf, body: operation.method === 'GET' ? undefined : body, headers: caller.headers };
}

/** Whether the table lets `caller` call `operation` (on the run and agent it names). */
function allowed(operation: Operation, caller: Caller, target: { runId: number; agentId: number } | null): boolean {
  if (operation.role === 'person' || operation.role === 'instance-admin') return false;
  if (caller.run) {
    if (!operation.runKey || target === null || target.runId !== caller.run.runId) return false;
    if (operation.role === 'agent') return caller.run.agentId !== null && target.agentId === caller.run.agentId;
    return true;
  }
  if (operation.role === 'agent') return false;
  return caller.role !== null && roleAllows(caller.role, operation.role as Role);
}

async function send(request: ReturnType<typeof requestOf>) {
  const response = await fetch(`${server.url}${request.path}`, {
    method: request.method,
    headers: { ...request.headers, ...(request.body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
  });
  // A live stream is answered once its headers come: it stays open while its run is under way.
  if (response.ok && response.headers.get('content-type')?.startsWith('text/event-stream')) {
    await response.body?.cancel();
    return { status: response.status, text: '' };
  }
  const text = await response.text();
  return { status: response.status, text };
}

describe('the role of every operation', () => {
  it('when every documented operation is asked by every kind of credential, then it is allowed exactly where its x-proctor-role says, and refused with a 403 naming the operation elsewhere', async () => {
    expect(operations.length).toBeGreaterThan(60);
    const wrong: string[] = [];
    let asked = 0;
    for (const operation of operations.filter((op) => op.role !== 'person' && op.role !== 'instance-admin')) {
      for (const caller of callers) {
        // A run-bound credential is asked on its own run and on another; the others on ids that exist nowhere.
        const targets =
          caller.run && operation.runKey
            ? [
                { runId, agentId },
                { runId: otherRunId, agentId },
                { runId, agentId: agentId + 1000 },
              ]
            : [null];
        for (const target of targets) {
          const request = requestOf(operation, caller, target);
          const { status, text } = await send(request);
          asked++;
          const expected = allowed(operation, caller, target);
          const named = text.includes(`${operation.method} ${operation.path}`);
          if (expected && (status === 403 || status === 401))
            wrong.push(`${caller.name} refused ${status} on ${request.method} ${request.path}: ${text.slice(0, 200)}`);
          if (!expected && (status !== 403 || !named))
            wrong.push(
              `${caller.name} got ${status} on ${request.method} ${request.path} (wanted a 403 naming ${operation.method} ${operation.path}): ${text.slice(0, 200)}`,
            );
        }
      }
    }
    expect(wrong.slice(0, 30)).toEqual([]);
    expect(asked).toBeGreaterThan(1000);
  }, 300_000);

  it('when the roles are read from the OpenAPI document, then docs/roles.md lists every operation with the same role', () => {
    const table = fs.readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', 'roles.md'), 'utf8');
    const documented = new Map<string, string>();
    for (const match of table.matchAll(/^\| `(GET|POST|PUT|PATCH|DELETE) ([^`]+)` \| ([\w-]+) \|/gm))
      documented.set(`${match[1]} ${match[2]}`, match[3] as string);
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(operations.map((op) => [`${op.method} ${op.path}`, op.role])));
  });
});

describe('credentials bound to what they are for', () => {
  it("when a person is demoted, then their personal admin key loses the admin's rights at once", async () => {
    const person = await seedUser(server.sql, [projectId], { role: 'admin', scope: 'admin' });
    const theirs = client(server.url, person.key, { 'x-project-id': String(projectId) });
    expect((await theirs.get('/api/keys')).status).toBe(200);
    const admin = client(server.url, (await seedUser(server.sql, [projectId], { role: 'admin' })).key, { 'x-project-id': String(projectId) });
    expect((await admin.patch(`/api/members/${person.userId}`, { role: 'viewer' })).status).toBe(200);
    const refused = await theirs.get('/api/keys');
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toMatch(/^GET \/api\/keys needs the role admin/);
    expect((await theirs.post('/api/snoozes', {})).status).toBe(403);
    expect((await theirs.get('/api/test-runs')).status).toBe(200);
  });

  it("when a run's key is used after its run ended, then it is refused with 401", async () => {
    const api = client(server.url, (await seedProject(server.sql)).key);
    const other = await seedProject(server.sql);
    await seedEnvironment(server.sql, other.projectId, 'staging');
    const project = client(server.url, other.key);
    const id = (await project.post('/api/test-runs/report', { environment: 'staging' })).body.data.test_run.id as number;
    const key = await createRunKey(server.sql, other.projectId, id);
    const runKey = client(server.url, key);
    expect((await runKey.post(`/api/test-runs/${id}/shards/1/begin`, { tests: [listedTest(testId(2))] })).status).toBe(200);
    expect((await runKey.post(`/api/test-runs/${id}/results`, { shard: 1, results: attemptsOf(testId(2), 'expected') })).status).toBe(200);
    expect((await runKey.post(`/api/test-runs/${id}/shards/1/end`, { status: 'passed' })).status).toBe(200);
    expect((await runKey.post(`/api/test-runs/${id}/results`, { shard: 1, results: attemptsOf(testId(2), 'expected') })).status).toBe(401);
    expect((await api.get('/api/test-runs')).status).toBe(200);
  });
});
