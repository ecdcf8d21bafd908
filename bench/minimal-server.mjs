// bench/load's baseline: the least a server can do for the same requests, to measure Proctor's
// request rate against. Node's http and postgres.js, as many processes as `proctor serve` runs
// (node:cluster) sharing as many connections; no key, no validation, no transaction: each request is
// one plain statement on the same tables (a run found or made, a shard's tests listed, its attempts
// inserted, the run ended). Started by bench/load.ts with DATABASE_URL, PORT, WORKERS, POOL_MAX,
// PROJECT_ID and ENVIRONMENT_ID; prints `listening` once every worker listens.
import cluster from 'node:cluster';
import { Buffer } from 'node:buffer';
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import postgres from 'postgres';

const env = process.env;
const WORKERS = Number(env.WORKERS ?? 2);

if (cluster.isPrimary) {
  let listening = 0;
  for (let i = 0; i < WORKERS; i++) {
    cluster.fork().on('listening', () => {
      if (++listening === WORKERS) console.log('listening');
    });
  }
  process.on('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
    process.exit(0);
  });
} else {
  const sql = postgres(env.DATABASE_URL, { max: Math.max(2, Math.ceil(Number(env.POOL_MAX ?? 10) / WORKERS)), onnotice: () => {} });
  const projectId = Number(env.PROJECT_ID);
  const environmentId = Number(env.ENVIRONMENT_ID);

  const ROUTES = [
    [/^\/api\/test-runs\/report$/, report],
    [/^\/api\/test-runs\/(\d+)\/shards\/(\d+)\/begin$/, begin],
    [/^\/api\/test-runs\/(\d+)\/results$/, results],
    [/^\/api\/test-runs\/(\d+)\/shards\/(\d+)\/end$/, end],
  ];

  async function report(body) {
    const [created] = await sql`
      insert into test_runs (project_id, environment_id, state, origin, run_key, total_shards, created_at)
      values (${projectId}, ${environmentId}, 'running', 'reporter', ${body.run_key}, ${body.total_shards}, now())
      on conflict (project_id, run_key) do nothing returning id`;
    const [run] = created ? [created] : await sql`select id from test_runs where project_id = ${projectId} and run_key = ${body.run_key}`;
    return { data: { test_run: { id: run.id } } };
  }

  async function begin(body, [runId]) {
    const rows = body.tests.map((t) => ({
      test_run_id: Number(runId),
      test_case_id: t.id,
      project_id: projectId,
      title: t.title,
      file_path: t.file_path,
      runner_project: t.runner_project,
    }));
    await sql`insert into test_run_tests ${sql(rows)} on conflict do nothing`;
    return { data: { success: true } };
  }

  async function results(body, [runId]) {
    const rows = body.results.map((a) => ({
      test_run_id: Number(runId),
      test_case_id: a.test_id,
      retry: a.retry,
      shard: body.shard,
      status: a.status,
      duration: a.duration,
      error_message: a.error_message,
      error_location: a.error_location,
      stdout_tail: a.stdout_tail,
      stderr_tail: a.stderr_tail,
      started_at: a.started_at,
      is_final: a.final !== null,
      outcome: a.final ? { expected: 'passed', unexpected: 'failed', flaky: 'flaky', skipped: 'skipped' }[a.final.outcome] : null,
      snoozed: false,
      total_duration: a.final?.total_duration ?? null,
      final_error_message: a.final?.error_message ?? null,
      failure_group_id: a.final?.failure_group_id ?? null,
    }));
    await sql`insert into test_results ${sql(rows)}`;
    return { data: { received: rows.length, recorded: rows.length } };
  }

  async function end(body, [runId]) {
    await sql`update test_runs set state = ${body.status === 'passed' ? 'passed' : 'failed'} where id = ${Number(runId)}`;
    return { data: { success: true } };
  }

  http
    .createServer((req, res) => {
      const chunks = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const body = JSON.parse((req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString());
        const route = ROUTES.find(([pattern]) => pattern.test(req.url));
        const answer = route ? route[1](body, route[0].exec(req.url).slice(1)) : Promise.reject(new Error(`no route ${req.url}`));
        answer.then(
          (data) => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify(data));
          },
          (error) => {
            res.writeHead(500, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ error: String(error) }));
          },
        );
      });
    })
    .listen(Number(env.PORT), '127.0.0.1').keepAliveTimeout = 65_000;
}
