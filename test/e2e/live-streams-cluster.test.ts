import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listedTest } from '../helpers/attempts.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { client } from '../helpers/http.ts';
import { type ServedNode, serveNode } from '../helpers/process.ts';
import { seedEnvironment, seedProject, testId } from '../helpers/server.ts';

// Issue 55: the limit of live streams a key holds at once (8) counts across the cluster, not per
// process: two `proctor serve` processes on one PostgreSQL database share it, and the streams of a
// node killed without closing them stop counting once their rows expire (PROCTOR_LIVE_STREAM_TTL_S).
// Two servers on one database need PostgreSQL: the embedded one serves one process.
const TTL_S = 10;

describe.skipIf(!process.env.DATABASE_URL)('live streams across two nodes on one database', () => {
  let db: TestDatabase;
  const nodes: ServedNode[] = [];
  let key: string;
  let runId: number;

  async function startNode(): Promise<ServedNode> {
    return serveNode({
      DATABASE_URL: db.url,
      PROCTOR_DEMO: 'false',
      PROCTOR_EXECUTOR_CONCURRENCY: '0',
      PROCTOR_DB_POOL_MAX: '4',
      PROCTOR_LIVE_STREAM_TTL_S: String(TTL_S),
    });
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    const project = await seedProject(db.sql, 'Shop');
    key = project.key;
    await seedEnvironment(db.sql, project.projectId, 'staging');
    nodes.push(await startNode(), await startNode());
    // A run under way: its stream stays open until the run ends.
    const api = client(nodes[1]?.url as string, key);
    runId = (await api.post('/api/test-runs/report', { environment: 'staging', branch: 'main' })).body.data.test_run.id as number;
    const begun = await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listedTest(testId(runId * 100 + 1))], complete: true });
    expect(begun.status).toBe(200);
  }, 180_000);

  afterAll(async () => {
    for (const node of nodes) await node.stop();
    await db?.drop();
  });

  const opened: AbortController[] = [];

  /** A stream of the run opened on `url`: its answer's status once its first event came (200) or it was refused. */
  async function open(url: string): Promise<number> {
    const abort = new AbortController();
    const response = await fetch(`${url}/api/test-runs/${runId}/events`, { headers: { authorization: `Bearer ${key}` }, signal: abort.signal });
    if (response.status !== 200 || !response.body) {
      await response.body?.cancel();
      return response.status;
    }
    opened.push(abort);
    // Its first event: the run's progress, sent as the stream opens.
    const reader = response.body.getReader();
    let text = '';
    while (!text.includes('event: progress')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    return 200;
  }

  it('when one key opens streams on two nodes, then the limit holds across both, and a killed node stops counting once its streams expire', async () => {
    const [a, b] = nodes as [ServedNode, ServedNode];
    const first = [];
    for (let i = 0; i < 5; i++) first.push(await open(a.url));
    for (let i = 0; i < 3; i++) first.push(await open(b.url));
    expect(first).toEqual([200, 200, 200, 200, 200, 200, 200, 200]);
    // Eight held, five on one node and three on the other: a ninth is refused on either.
    expect(await open(a.url)).toBe(429);
    expect(await open(b.url)).toBe(429);
    const [rows] = await db.sql<{ n: number; nodes: number }[]>`select count(*)::int as n, count(distinct node)::int as nodes from live_streams`;
    expect(rows).toEqual({ n: 8, nodes: 2 });

    // Node A dies without closing anything: its five rows stay, and count until they expire.
    await a.stop('SIGKILL');
    expect(await open(b.url)).toBe(429);
    const deadline = Date.now() + (TTL_S + 60) * 1000;
    // A's rows expire one by one (each from its own opening or A's last renewal): wait until only B's
    // three, which B renews, are unexpired.
    let live = 8;
    while (live > 3 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      live = ((await db.sql<{ n: number }[]>`select count(*)::int as n from live_streams where expires_at >= now()`)[0] as { n: number }).n;
    }
    expect(live).toBe(3);
    // Five places came back, the dead node's: B's own three still count (it renews them).
    const more = [];
    for (let i = 0; i < 5; i++) more.push(await open(b.url));
    expect(more).toEqual([200, 200, 200, 200, 200]);
    expect(await open(b.url)).toBe(429);
    const [left] = await db.sql<{ n: number; nodes: number }[]>`select count(*)::int as n, count(distinct node)::int as nodes from live_streams`;
    expect(left).toEqual({ n: 8, nodes: 1 });

    // Closed streams give their places back at once, across the cluster.
    for (const abort of opened.splice(0)) abort.abort();
    let count = 8;
    while (count > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      count = ((await db.sql<{ n: number }[]>`select count(*)::int as n from live_streams`)[0] as { n: number }).n;
    }
    expect(count).toBe(0);
  }, 240_000);
});
