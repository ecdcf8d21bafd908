// The dashboard's pages at the analytics bench's size (10 million results, 20,000 tests, 500 runs):
// bench/analytics loads the data set and calls this on it, so that the 3 minutes of loading are
// paid once. Each page is asked for by a signed-in person over HTTP; its time is the round trip
// on loopback, server time and all. Target: every page under 200 ms median. Lighthouse's scores of
// every page, on the demo's data rather than this set, are bench/lighthouse's (its own CI step).
import type { Sql } from '../server/src/db.ts';
import { addMember } from '../server/src/projects/store.ts';
import { createLoginLink } from '../server/src/sessions/store.ts';
import { createUser } from '../server/src/users/store.ts';
import { createKey } from '../server/src/auth/store.ts';
import { median, percentile } from './lib.ts';

const TARGET_MS = 200;
const REQUESTS = Number(process.env.BENCH_DASHBOARD_REQUESTS ?? 15);

/** A session cookie for a new member of the project. */
export async function signIn(url: string, sql: Sql, projectId: number): Promise<string> {
  const userId = await createUser(sql, { email: `bench-${Date.now()}@example.com`, name: 'Bench', picture: '' });
  await addMember(sql, projectId, userId, 'admin');
  const response = await fetch(`${url}/sign-in/link?token=${await createLoginLink(sql, userId, new Date())}`, { redirect: 'manual' });
  return (response.headers.get('set-cookie') as string).split(';')[0] as string;
}

/**
 * The latest run's list of its tests, as its shards' begin writes it (the bulk load writes results
 * alone), so that its page lists 20,000 tests; its id.
 */
export async function listLatestRunTests(sql: Sql, projectId: number): Promise<number> {
  const [latest] = await sql<{ id: number }[]>`select id from test_runs where project_id = ${projectId} order by id desc limit 1`;
  await sql`
    insert into test_run_tests (test_run_id, test_case_id, project_id, title, file_path, runner_project)
    select ${latest?.id as number}, id, project_id, name, file_path, runner_project from test_cases where project_id = ${projectId}
    on conflict do nothing`;
  return latest?.id as number;
}

export async function benchDashboard(url: string, sql: Sql, projectId: number, environmentSlug: string): Promise<boolean> {
  const cookie = await signIn(url, sql, projectId);
  const latest = await listLatestRunTests(sql, projectId);
  const [test] = await sql<{ id: string }[]>`select id from test_cases where project_id = ${projectId} order by id limit 1 offset 1234`;
  const [previous] = await sql<{ id: number }[]>`select id from test_runs where project_id = ${projectId} and id < ${latest} order by id desc limit 1`;
  const base = `/projects/${projectId}`;
  const pages: [string, string][] = [
    ['projects', '/'],
    ['runs', `${base}/runs`],
    ['runs, filtered', `${base}/runs?environment=${environmentSlug}&state=failed`],
    ['a run of 20,000 tests', `${base}/runs/${latest}`],
    ['two runs of 20,000 tests compared (page)', `${base}/runs/${latest}/compare/${previous?.id}`],
    ['two runs of 20,000 tests compared (API)', `/api/test-runs/${latest}/compare/${previous?.id}`],
    ['tests, 30 days', `${base}/tests?days=30`],
    ['tests, searched', `${base}/tests?days=30&search=file1`],
    ['a test', `${base}/tests/${test?.id}`],
    ['failure groups', `${base}/failure-groups`],
    ['flaky tests', `${base}/flaky-tests`],
    ['flaky tests, every class, searched', `${base}/flaky-tests?class=all&search=file1`],
    ['snoozes', `${base}/snoozes`],
    ['snoozes, finding tests', `${base}/snoozes?find=file1`],
    ['environments', `${base}/environments`],
    ['analytics, 30 days', `${base}/analytics?days=30`],
    ['analytics, 90 days', `${base}/analytics?days=90`],
  ];
  console.log(`bench/dashboard: each page (and the comparison's API) over HTTP, signed in (${REQUESTS} requests)   median     p95     size`);
  let met = true;
  for (const [name, path] of pages) {
    const times: number[] = [];
    let size = 0;
    for (let i = 0; i < REQUESTS + 2; i++) {
      const started = performance.now();
      // The API takes the session's cookie for the project it is told (the dashboard's script does so).
      const response = await fetch(`${url}${path}`, { headers: { cookie, 'x-project-id': String(projectId) }, redirect: 'manual' });
      const body = await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
      // The first two warm the page's queries and code.
      if (i >= 2) times.push(performance.now() - started);
      size = body.byteLength;
    }
    const med = median(times);
    if (med >= TARGET_MS) met = false;
    console.log(
      `  ${name.padEnd(48)} ${med.toFixed(1).padStart(7)} ms ${percentile(times, 95).toFixed(1).padStart(7)} ms ${(size / 1024).toFixed(0).padStart(6)} kB`,
    );
  }
  const assistant = await timeMcpGetRun(url, await createKey(sql, { projectId }, 'read'), latest);
  if (assistant.median >= TARGET_MS) met = false;
  console.log(
    `  ${'MCP get_run of a run of 20,000 tests'.padEnd(48)} ${assistant.median.toFixed(1).padStart(7)} ms ${assistant.p95.toFixed(1).padStart(7)} ms ${(assistant.bytes / 1024).toFixed(0).padStart(6)} kB`,
  );
  console.log(`  target: every page under ${TARGET_MS} ms median at 10,000,000 results: ${met ? 'met' : 'NOT met'}`);
  return met;
}

/** An assistant's get_run over MCP (one stateless POST to /mcp, as a client sends it), timed as the pages are. */
export async function timeMcpGetRun(
  url: string,
  key: string,
  runId: number,
  requests = REQUESTS,
): Promise<{ median: number; p95: number; p99: number; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < requests + 2; i++) {
    const started = performance.now();
    const response = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'get_run', arguments: { run_id: runId } } }),
    });
    const body = await response.arrayBuffer();
    const answer = JSON.parse(Buffer.from(body).toString()) as { result?: { isError?: boolean } };
    if (response.status !== 200 || !answer.result || answer.result.isError)
      throw new Error(`MCP get_run answered ${response.status}: ${Buffer.from(body).toString().slice(0, 200)}`);
    if (i >= 2) times.push(performance.now() - started);
    bytes = body.byteLength;
  }
  return { median: median(times), p95: percentile(times, 95), p99: percentile(times, 99), bytes };
}
