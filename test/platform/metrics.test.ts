// A node's Prometheus metrics: the real server (a primary and two HTTP workers, as `proctor serve`
// runs), driven through its API (a reported run, a webhook delivery, agents leasing units, the
// retention pass), its metrics port scraped before and after: every metric the docs name is there
// and moves, counted once across the workers. And the request id that follows a request.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptsOf, listedTest } from '../helpers/attempts.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { client } from '../helpers/http.ts';
import { freePort, httpWorkersOf, type ServedNode, serveNode } from '../helpers/process.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { waitUntil } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, testId } from '../helpers/server.ts';

/** One sample of Prometheus's text format. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] as string] = pair[2] as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of a metric's samples whose labels include `labels`; null when it has none at all. */
function sumOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | null {
  const matching = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return matching.length === 0 ? null : matching.reduce((sum, s) => sum + s.value, 0);
}

/** Debian's Prometheus server (the `prometheus` package), where it is installed. */
const prometheusBin = spawnSync('prometheus', ['--version']).status === 0;
if (!prometheusBin) console.warn("the Prometheus server is not installed (Debian's `prometheus` package): it does not scrape the node here");

function unit(file: string, ids: string[]) {
  return { runner_project: 'chromium', file, tests: ids.map((id) => ({ id, line: `[chromium] › ${file} › test ${id.slice(16, 20)}` })) };
}

describe('a node serving its metrics', () => {
  let db: TestDatabase;
  let receiver: Receiver;
  let dataDir: string;
  let server: ServedNode;
  let url: string;
  let metricsUrl: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    receiver = await startReceiver();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-metrics-'));
    const metricsPort = await freePort();
    server = await serveNode({
      HOST: '127.0.0.1',
      PROCTOR_METRICS_PORT: String(metricsPort),
      DATABASE_URL: db.url,
      PROCTOR_DATA_DIR: dataDir,
      PROCTOR_DEMO: 'false',
      PROCTOR_HTTP_WORKERS: '2',
      PROCTOR_EXECUTOR_CONCURRENCY: '1',
      PROCTOR_EXECUTOR_POLL_MS: '200',
      PROCTOR_RETENTION_INTERVAL_MIN: '0.01',
      PROCTOR_SIGNING_SECRET: 'test-signing-secret-0123456789',
      PROCTOR_NOTIFY_ALLOW_HOSTS: '127.0.0.1',
      LOG_LEVEL: 'info',
    });
    url = server.url;
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
    await db?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function scrape(): Promise<Sample[]> {
    const answer = await fetch(metricsUrl);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toContain('text/plain');
    return parseMetrics(await answer.text());
  }

  // A node of several processes with group commit is PostgreSQL's: on the embedded database a node is
  // one process and writes each batch alone, so the workers' sums and the batches' figures are not there.
  const onPostgres = process.env.DATABASE_URL !== undefined;

  it.runIf(onPostgres)(
    'when a run is reported, a webhook told, agents lease units and retention passes, then every metric is there and moves, summed over the workers',
    async () => {
      expect(httpWorkersOf(server.child.pid as number)).toHaveLength(2);
      const before = await scrape();
      // Of the node's own, before any request: the pool, Node's event loop and memory.
      expect(sumOf(before, 'proctor_db_pool_max_connections')).toBeGreaterThan(0);
      for (const name of ['process_resident_memory_bytes', 'nodejs_heap_size_used_bytes']) expect(sumOf(before, name), name).toBeGreaterThan(0);
      expect(sumOf(before, 'nodejs_eventloop_lag_seconds')).not.toBeNull();

      const { projectId, key } = await seedProject(db.sql);
      await seedEnvironment(db.sql, projectId, 'staging');
      const api = client(url, key);
      expect((await api.post('/api/notification-destinations', { type: 'webhook', url: `${receiver.url}/hook` })).status).toBe(201);

      // A reported run: 20 batches of results, then its end, which queues the webhook's delivery.
      const runId = (await api.post('/api/test-runs/report', { environment: 'staging' })).body.data.test_run.id as number;
      const ids = Array.from({ length: 20 }, (_, i) => testId(200 + i));
      expect((await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: ids.map((id) => listedTest(id)) })).status).toBe(200);
      const attempts = ids.flatMap((id) => attemptsOf(id, 'unexpected')).length;
      const batches = await Promise.all(ids.map((id) => api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: attemptsOf(id, 'unexpected') })));
      expect(batches.map((b) => b.status)).toEqual(ids.map(() => 200));
      expect((await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed' })).status).toBe(200);
      await waitUntil(() => receiver.requests.length === 1, 30_000, 'the webhook delivery');

      // A run of agents in a project the executor cannot serve (no repository): two units planned, one leased.
      const agents = await seedProject(db.sql);
      await db.sql`update projects set repo_url = null where id = ${agents.projectId}`;
      await seedEnvironment(db.sql, agents.projectId, 'staging');
      const agentsApi = client(url, agents.key);
      const agentRunId = (await agentsApi.post('/api/test-runs/agent-run', { environment: 'staging', run_key: 'metrics-build' })).body.data.test_run
        .id as number;
      const joined = (await agentsApi.post(`/api/test-runs/${agentRunId}/agents`, { name: 'runner-1' })).body.data;
      const asAgent = client(url, joined.agent_token as string);
      const plan = [unit('a.spec.ts', [testId(301)]), unit('b.spec.ts', [testId(302)])];
      expect((await asAgent.put(`/api/test-runs/${agentRunId}/units`, { agent_id: joined.agent.id, commit: 'abc123', units: plan })).status).toBe(200);
      expect((await asAgent.post(`/api/test-runs/${agentRunId}/units/lease`, { agent_id: joined.agent.id })).body.data.unit).not.toBeNull();

      // A run of agents the executor serves as one more agent: its slot is taken (the checkout then fails).
      const served = await seedProject(db.sql);
      await seedEnvironment(db.sql, served.projectId, 'staging');
      expect((await client(url, served.key).post('/api/test-runs/agent-run', { environment: 'staging', run_key: 'served-build' })).status).toBe(200);

      let after: Sample[] = [];
      await waitUntil(
        async () => {
          after = await scrape();
          return (
            (sumOf(after, 'proctor_outbox_deliveries_total', { outcome: 'delivered' }) ?? 0) >= 1 &&
            (sumOf(after, 'proctor_executor_runs_claimed_total', { distribution: 'agents' }) ?? 0) >= 1 &&
            (sumOf(after, 'proctor_retention_passes_total', { outcome: 'ok' }) ?? 0) >= 1
          );
        },
        60_000,
        'the delivery, the claim and a retention pass in the metrics',
      );

      // Requests by route pattern and status, from both workers: every batch counted once.
      const resultsRoute = { route: '/api/test-runs/:id/results', method: 'POST', status: '200' };
      expect(sumOf(after, 'proctor_http_request_duration_seconds_count', resultsRoute)).toBe(20);
      expect(sumOf(after, 'proctor_http_request_duration_seconds_bucket', { ...resultsRoute, le: '+Inf' })).toBe(20);
      expect(sumOf(after, 'proctor_http_request_duration_seconds_sum', resultsRoute)).toBeGreaterThan(0);
      expect(after.some((s) => s.name === 'proctor_http_request_duration_seconds_count' && /\d{2,}/.test(s.labels.route ?? ''))).toBe(false);
      expect(sumOf(after, 'proctor_http_requests_in_flight')).toBe(0);
      // Results, and the group commit that wrote them.
      expect(sumOf(after, 'proctor_results_ingested_total', { source: 'batch' })).toBe(attempts);
      expect(sumOf(after, 'proctor_group_commit_batches_sum')).toBe(20);
      expect(sumOf(after, 'proctor_group_commit_attempts_sum')).toBe(attempts);
      expect(sumOf(after, 'proctor_group_commit_batches_count')).toBeGreaterThanOrEqual(1);
      expect(sumOf(after, 'proctor_group_commit_write_seconds_count')).toBe(sumOf(after, 'proctor_group_commit_batches_count'));
      // The pool: connections open, transactions' waits for theirs.
      expect(sumOf(after, 'proctor_db_connections_open')).toBeGreaterThan(0);
      expect(sumOf(after, 'proctor_db_pool_wait_seconds_count')).toBeGreaterThan(sumOf(before, 'proctor_db_pool_wait_seconds_count') as number);
      expect(sumOf(after, 'proctor_db_transactions_active')).toBeGreaterThanOrEqual(0);
      // The executor's claim, the agents' leases.
      expect(sumOf(after, 'proctor_executor_slots')).toBe(1);
      expect(sumOf(after, 'proctor_executor_slots_busy')).not.toBeNull();
      expect(sumOf(after, 'proctor_agent_leases_granted_total')).toBe(1);
      expect(sumOf(after, 'proctor_agent_leases')).toBe(1);
      expect(sumOf(after, 'proctor_agents')).toBe(1);
      expect(sumOf(after, 'proctor_runs', { state: 'queued', distribution: 'agents' })).toBeGreaterThanOrEqual(1);
      // The outbox: its delivery went, nothing left behind.
      expect(sumOf(after, 'proctor_outbox_pending', { kind: 'all' })).toBe(0);
      expect(sumOf(after, 'proctor_outbox_oldest_due_seconds')).toBe(0);
      // The event loop's delay, as Node's monitor sampled it since the start.
      expect(sumOf(after, 'nodejs_eventloop_lag_p99_seconds')).toBeGreaterThan(0);
      // Retention.
      expect(sumOf(after, 'proctor_retention_last_pass_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 120);
      expect(sumOf(after, 'proctor_retention_results_deleted_total')).not.toBeNull();
      expect(sumOf(after, 'proctor_retention_runs_deleted_total', { kind: 'results' })).not.toBeNull();
    },
    150_000,
  );

  it('when the API port is asked for the metrics, then it does not serve them; the metrics port serves nothing else', async () => {
    expect((await fetch(`${url}/metrics`)).status).toBe(404);
    expect((await fetch(metricsUrl.replace('/metrics', '/'))).status).toBe(404);
  });

  it("when a request brings an X-Request-Id, then it is kept, echoed and logged; a malformed one is replaced by the node's own", async () => {
    const kept = await fetch(`${url}/healthz`, { headers: { 'x-request-id': 'haproxy-1a2b3c:42.7' } });
    expect(kept.headers.get('x-request-id')).toBe('haproxy-1a2b3c:42.7');
    const replaced = await fetch(`${url}/healthz`, { headers: { 'x-request-id': 'not ok {"a":1}' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    await waitUntil(() => server.output().includes('"request_id":"haproxy-1a2b3c:42.7"'), 10_000, 'the log line of the request');
    const line = server
      .output()
      .split('\n')
      .find((l) => l.includes('"request_id":"haproxy-1a2b3c:42.7"'));
    expect(JSON.parse(line as string)).toMatchObject({ msg: 'request', path: '/healthz', status: 200 });
  });

  // It reads the requests of the first test.
  it.runIf(onPostgres && prometheusBin)(
    'when a Prometheus server scrapes the node, then its queries see the node up and its requests counted',
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-prometheus-'));
      const port = await freePort();
      const target = new URL(metricsUrl).host;
      fs.writeFileSync(
        path.join(dir, 'prometheus.yml'),
        `global: { scrape_interval: 1s }\nscrape_configs:\n  - job_name: proctor\n    static_configs: [{ targets: ['${target}'] }]\n`,
      );
      const prometheus = spawn(
        'prometheus',
        [`--config.file=${dir}/prometheus.yml`, `--storage.tsdb.path=${dir}/data`, `--web.listen-address=127.0.0.1:${port}`],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let log = '';
      prometheus.stderr.on('data', (chunk) => (log += chunk));
      const query = async (expr: string) => {
        const answer = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(expr)}`).catch(() => null);
        if (!answer?.ok) return null;
        const body = (await answer.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
        return body.data.result;
      };
      try {
        await waitUntil(
          async () => (await query('up{job="proctor"}'))?.[0]?.value[1] === '1',
          60_000,
          `Prometheus scraping the node (its log: ${log.slice(-500)})`,
        );
        // The 20 batches of the first test, from both workers, as the node's one series.
        const requests = await query('sum(proctor_http_request_duration_seconds_count{job="proctor",route="/api/test-runs/:id/results"})');
        expect(Number(requests?.[0]?.value[1])).toBe(20);
        expect(Number((await query('max(nodejs_eventloop_lag_p99_seconds{job="proctor"})'))?.[0]?.value[1])).toBeGreaterThan(0);
      } finally {
        prometheus.kill('SIGTERM');
        await new Promise((resolve) => prometheus.once('exit', resolve));
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
    90_000,
  );
});
