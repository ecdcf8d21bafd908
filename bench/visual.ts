// The visual review page of a run with 200 screenshot changes (issue 57: "the review page of a run
// with 200 changes opens in under 200 ms, images loaded lazily"), asked for over HTTP by a
// signed-in member, as bench/dashboard asks for each page: the round trip on loopback, server time
// and all, its images not fetched (the page loads them lazily). Also the review API's answer, and
// the page when the project sets a noise ratio (each change's recent diffs are then looked up).
// Target: the page under the dashboard's page target, 200 ms median. On request: `npx tsx bench/visual.ts`.
import type { Sql } from '../server/src/db.ts';
import { signIn } from './dashboard.ts';
import { benchDatabase, benchProject, benchServer, median, percentile } from './lib.ts';

const CHANGES = Number(process.env.BENCH_VISUAL_CHANGES ?? 200);
const REQUESTS = Number(process.env.BENCH_VISUAL_REQUESTS ?? 15);
const TARGET_MS = 200;

/** A failed run of CHANGES screenshot tests, each with its baseline, new and diff images, compared; its id. */
async function seedRun(sql: Sql, projectId: number, environmentId: number): Promise<number> {
  const now = new Date();
  await sql`
    insert into test_cases (project_id, id, name, file_path, suites, runner_project, tags, line, "column")
    select ${projectId}, lpad(to_hex(g), 20, '0') || '-' || repeat('v', 20), 'screen ' || g, 'tests/screens' || (g / 20) || '.spec.ts', '{}', 'chromium', '{}', 1, 1
    from generate_series(1, ${CHANGES}) g`;
  const [run] = await sql<{ id: number }[]>`
    insert into test_runs (project_id, environment_id, state, origin, failed_count, total_count, run_started_at, run_ended_at, test_run_branch, "commit")
    values (${projectId}, ${environmentId}, 'failed', 'api', ${CHANGES}, ${CHANGES}, ${now}, ${now}, 'feature-x', ${'c'.repeat(40)}) returning id`;
  const runId = (run as { id: number }).id;
  // One blob per image kind and test: the page signs their URLs, it never reads their bytes.
  await sql`
    insert into artifact_blobs (project_id, sha256, size_bytes, storage_key, stored_at, created_at)
    select ${projectId}, encode(sha256((g || '-' || k)::bytea), 'hex'), 20000, 'bench/' || g || '-' || k, ${now}, ${now}
    from generate_series(1, ${CHANGES}) g cross join unnest(array['expected', 'actual', 'diff']) k`;
  await sql`
    insert into test_attachments (project_id, test_run_id, test_case_id, retry, name, content_type, blob_id, created_at)
    select ${projectId}, ${runId}, lpad(to_hex(g), 20, '0') || '-' || repeat('v', 20), 0, 'screen-' || g || '-' || k || '.png', 'image/png', b.id, ${now}
    from generate_series(1, ${CHANGES}) g cross join unnest(array['expected', 'actual', 'diff']) k
    join artifact_blobs b on b.project_id = ${projectId} and b.sha256 = encode(sha256((g || '-' || k)::bytea), 'hex')`;
  await sql`
    insert into visual_changes (project_id, test_run_id, test_case_id, retry, snapshot_name, expected_attachment_id, actual_attachment_id, diff_attachment_id,
                                width, height, size_changed, changed_pixels, changed_ratio, boxes, compared_at, created_at)
    select ${projectId}, ${runId}, a.test_case_id, 0, 'screen-' || g,
           max(a.id) filter (where a.name like '%-expected.png'), max(a.id) filter (where a.name like '%-actual.png'), max(a.id) filter (where a.name like '%-diff.png'),
           1280, 720, false, 800 + g, (800 + g) / 921600.0, ${sql.json([{ x: 10, y: 10, width: 40, height: 20 }])}, ${now}, ${now}
    from generate_series(1, ${CHANGES}) g
    join test_attachments a on a.test_run_id = ${runId} and a.test_case_id = lpad(to_hex(g), 20, '0') || '-' || repeat('v', 20)
    group by g, a.test_case_id`;
  return runId;
}

async function time(url: string, path: string, cookie: string, projectId: number): Promise<{ median: number; p95: number; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < REQUESTS + 2; i++) {
    const started = performance.now();
    const response = await fetch(`${url}${path}`, { headers: { cookie, 'x-project-id': String(projectId) }, redirect: 'manual' });
    const body = await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
    // The first two warm the page's queries and code.
    if (i >= 2) times.push(performance.now() - started);
    bytes = body.byteLength;
  }
  return { median: median(times), p95: percentile(times, 95), bytes };
}

async function main(): Promise<void> {
  const db = await benchDatabase();
  try {
    const { projectId, environmentId } = await benchProject(db.sql, 'local');
    const runId = await seedRun(db.sql, projectId, environmentId);
    const [{ n } = { n: 0 }] = await db.sql<{ n: number }[]>`select count(*)::int as n from visual_changes where test_run_id = ${runId}`;
    if (n !== CHANGES) throw new Error(`seeded ${n} visual changes, not ${CHANGES}`);
    const server = await benchServer(db);
    try {
      const cookie = await signIn(server.url, db.sql, projectId);
      const page = `/projects/${projectId}/runs/${runId}/visual`;
      console.log(`bench/visual: a run of ${CHANGES} visual changes, over HTTP, signed in (${REQUESTS} requests)   median     p95     size`);
      const rows: [string, string, boolean][] = [
        ['review page', page, true],
        ['review API (visual-changes)', `/api/test-runs/${runId}/visual-changes`, false],
      ];
      let met = true;
      const report = async (name: string, path: string, counts: boolean) => {
        const timed = await time(server.url, path, cookie, projectId);
        if (counts && timed.median >= TARGET_MS) met = false;
        console.log(
          `  ${name.padEnd(52)} ${timed.median.toFixed(1).padStart(7)} ms ${timed.p95.toFixed(1).padStart(7)} ms ${(timed.bytes / 1024).toFixed(0).padStart(6)} kB`,
        );
      };
      for (const [name, path, counts] of rows) await report(name, path, counts);
      await db.sql`update projects set visual_noise_ratio = 0.01 where id = ${projectId}`;
      await report('review page, the project setting a noise ratio', page, true);
      console.log(`  target: the review page of ${CHANGES} changes under ${TARGET_MS} ms median (the dashboard's page target): ${met ? 'met' : 'NOT met'}`);
    } finally {
      await server.close();
    }
  } finally {
    await db.close();
  }
}

await main();
