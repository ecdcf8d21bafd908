import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.ts';
import { connect, type Sql } from '../../server/src/db.ts';
import { systemResolver } from '../../server/src/outbound/addresses.ts';
import { deliverTrackerActionNext } from '../../server/src/trackers/index.ts';
import { type GitHubStandIn, problemsWithGitHubRequest, startGitHub } from '../helpers/github.ts';
import { client } from '../helpers/http.ts';
import { waitUntil } from '../helpers/runs.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { githubTrackedProject, reportOutcomes, trackersSettled } from '../helpers/trackers.ts';

// The trackers' outbox under several job workers: GitHub is down while five runs of the default
// branch pass by, so each link's actions pile up (a group's issue created, its close after two
// passes, its reopening after the next failure); then GitHub answers slowly and four workers (the
// server's own and three more, each on a connection of its own, as other processes would be) send
// them. Each issue gets its calls one at a time and in the order of its runs, while the two links
// go in parallel; every request is checked against GitHub's published OpenAPI description.

let server: TestServer;
let api: ReturnType<typeof client>;
let github: GitHubStandIn;
let proxy: Server;
let gate: string;
let down = true;
/** The requests under way on each issue (by number; 0: the repository's issue list and creation), and the most seen at once. */
const inFlight = new Map<number, number>();
const mostOnIssue = new Map<number, number>();
let mostInAll = 0;
const onPostgres = process.env.DATABASE_URL !== undefined;

const issueOf = (path: string) => Number(/\/issues\/(\d+)/.exec(path)?.[1] ?? 0);

/** GitHub behind a gate: 503 while `down`, else each issue call answered after 80 ms, counted while under way. */
async function startGate(target: string): Promise<string> {
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const path = req.url ?? '/';
      if (down) return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"Service Unavailable"}');
      const onIssues = /\/repos\/[^/]+\/[^/]+\/issues/.test(path);
      const issue = issueOf(path);
      if (onIssues) {
        inFlight.set(issue, (inFlight.get(issue) ?? 0) + 1);
        mostOnIssue.set(issue, Math.max(mostOnIssue.get(issue) ?? 0, inFlight.get(issue) as number));
        mostInAll = Math.max(
          mostInAll,
          [...inFlight.values()].reduce((a, b) => a + b, 0),
        );
        await new Promise((resolve) => setTimeout(resolve, 80));
      }
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'content-type', 'accept', 'user-agent']) if (req.headers[name]) headers[name] = String(req.headers[name]);
      const answer = await fetch(`${target}${path}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      const text = await answer.text();
      if (onIssues) inFlight.set(issue, (inFlight.get(issue) ?? 1) - 1);
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(text);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
}

/** Once the run is rolled up and followed: the next run is followed after it, as runs that end apart are. */
async function followed(): Promise<void> {
  await waitUntil(
    async () => {
      const [row] = await server.sql<{ queued: number }[]>`
        select (select count(*) from rollup_queue)::int + (select count(*) from tracker_follow_queue)::int as queued`;
      return row?.queued === 0;
    },
    30_000,
    'the run to be followed',
  );
}

beforeAll(async () => {
  github = await startGitHub();
  gate = await startGate(github.url);
  server = await startTestServer({ env: { PROCTOR_GITHUB_API_URL: gate } });
  const tracked = await githubTrackedProject(server);
  api = tracked.api;
});

afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => proxy?.close(resolve));
  await github?.close();
});

describe("a link's actions under several job workers", () => {
  it('when GitHub was down while a group failed, passed twice and failed again, then four workers create, close and reopen its issue in that order, one call at a time, beside another link', async () => {
    // fg-2: fails, fails, passes, passes (closed), fails (reopened). fg-4: fails, then passes (closed).
    await reportOutcomes(api, 'main', { 2: 'failed', 4: 'failed' });
    await followed();
    await reportOutcomes(api, 'main', { 2: 'failed' });
    await followed();
    await reportOutcomes(api, 'main', {});
    await followed();
    await reportOutcomes(api, 'main', {});
    await followed();
    await reportOutcomes(api, 'main', { 2: 'failed' });
    await followed();

    // Nothing went through; every outcome waits, the last failure too though a failure's check waits before it.
    const waiting = await server.sql<{ subject_id: string; kind: string }[]>`
      select l.subject_id, a.kind from tracker_actions a join tracker_links l on l.id = a.link_id where a.state = 'pending' order by a.id`;
    expect(waiting.map((w) => `${w.subject_id} ${w.kind}`)).toEqual([
      'fg-2 create',
      'fg-4 create',
      'fg-2 failing',
      'fg-4 passing',
      'fg-2 passing',
      'fg-2 failing',
    ]);
    expect(github.issues).toHaveLength(0);

    down = false;
    const config = loadConfig({ DATABASE_URL: server.db.url, PROCTOR_GITHUB_API_URL: gate });
    const deps = (sql: Sql) => ({ sql, clock: server.clock.read, settings: config.notify, receivers: { allow: config.notify.allow, resolve: systemResolver } });
    const connections = [1, 2, 3].map(() => connect(server.db.url, 1));
    let stopping = false;
    const sent = [0, 0, 0];
    const workers = connections.map(async (sql, index) => {
      while (!stopping) {
        if (await deliverTrackerActionNext(deps(sql))) sent[index] = (sent[index] as number) + 1;
        else await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    try {
      await trackersSettled(server);
    } finally {
      stopping = true;
      await Promise.all(workers);
      await Promise.all(connections.map((sql) => sql.end({ timeout: 5 })));
    }

    const issueOfGroup = async (group: string) => Number((await api.get(`/api/failure-groups/${group}`)).body.data.failure_group.issue.key as string);
    const calls = (number: number) =>
      github.requests
        .filter((r) => r.method !== 'GET' && issueOf(r.path) === number)
        .map((r) =>
          r.method === 'PATCH'
            ? `PATCH ${(r.body as { state: string }).state}`
            : `${r.method} ${(r.body as { body: string }).body.split(' ').slice(0, 4).join(' ')}`,
        );
    const two = await issueOfGroup('fg-2');
    const four = await issueOfGroup('fg-4');
    expect(github.issues.map((i) => i.number).sort()).toEqual([two, four].sort());
    // fg-2: the second failure found its issue open (nothing to say); the passes closed it, the last failure reopened it.
    expect(calls(two)).toEqual(["POST This failure's tests passed", 'PATCH closed', 'PATCH open', 'POST This failure failed again']);
    expect(github.issues.find((i) => i.number === two)?.state).toBe('open');
    expect(calls(four)).toEqual(["POST This failure's tests passed", 'PATCH closed']);
    expect(github.issues.find((i) => i.number === four)?.state).toBe('closed');
    expect((await api.get('/api/failure-groups/fg-2')).body.data.failure_group.issue).toMatchObject({ state: 'open' });
    expect((await api.get('/api/failure-groups/fg-4')).body.data.failure_group.issue).toMatchObject({ state: 'closed' });
    // Nothing posted twice: one issue per group, each comment once.
    expect(github.requests.filter((r) => r.method === 'POST' && r.path === '/repos/acme/shop/issues')).toHaveLength(2);

    // One call at a time on each issue; the links went in parallel, and the added workers took part.
    expect(mostOnIssue.get(two)).toBe(1);
    expect(mostOnIssue.get(four)).toBe(1);
    // The embedded database serves its connections one statement at a time, so only PostgreSQL's
    // workers can be seen on two issues at once; the order above holds on both.
    if (onPostgres) expect(mostInAll).toBeGreaterThanOrEqual(2);
    expect(sent.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(github.requests.flatMap(problemsWithGitHubRequest)).toEqual([]);
  }, 90_000);
});
