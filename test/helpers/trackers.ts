import { attempt, attemptsOf, listedTest } from './attempts.ts';
import { client } from './http.ts';
import { waitUntil } from './runs.ts';
import { seedEnvironment, seedProject, testId, type TestServer } from './server.ts';

// Runs of a fixture project (tests 1, 2 and 4 in environment `staging`) for the trackers' tests,
// and the wait until the trackers have followed them and sent what they queued.

type Api = ReturnType<typeof client>;
export type Outcome = 'passed' | 'failed' | 'flaky';

/** A run of `branch` where each test fares as `outcomes` says (passed when not named); a failed test n is in failure group `fg-n`. */
export async function reportOutcomes(api: Api, branch: string, outcomes: Partial<Record<1 | 2 | 4, Outcome>>): Promise<number> {
  const runId = (await api.post('/api/test-runs/report', { environment: 'staging', branch, commit: 'a'.repeat(40) })).body.data.test_run.id as number;
  const tests = [1, 2, 4] as const;
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: tests.map((n) => listedTest(testId(n), { title: `test ${n}` })) });
  const results = tests.flatMap((n) => {
    const outcome = outcomes[n] ?? 'passed';
    if (outcome === 'passed') return attemptsOf(testId(n), 'expected');
    if (outcome === 'flaky') return attemptsOf(testId(n), 'flaky', `Error: test ${n} wobbles`);
    return [
      attempt(testId(n), { final: null, status: 'failed', error_message: `Error: test ${n} broke` }),
      attempt(testId(n), { retry: 1, final: 'unexpected', status: 'failed', error_message: `Error: test ${n} broke`, failureGroupId: `fg-${n}` }),
    ];
  });
  await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results });
  const failing = tests.filter((n) => outcomes[n] === 'failed');
  for (const n of failing) await api.post(`/api/failure-groups/fg-${n}/members`, { test_run_id: runId, test_case_id: testId(n) });
  await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: failing.length > 0 ? 'failed' : 'passed' });
  return runId;
}

/**
 * Once every ended run is rolled up and followed, and no tracker action waits: a retry due later
 * on the server's clock is brought forward by moving the clock on.
 */
export async function trackersSettled(server: TestServer): Promise<void> {
  await waitUntil(
    async () => {
      const [row] = await server.sql<{ queued: number; waiting: number; later: number }[]>`
        select (select count(*) from rollup_queue)::int + (select count(*) from tracker_follow_queue)::int as queued,
               (select count(*) from tracker_actions where state = 'pending')::int as waiting,
               (select count(*) from tracker_actions where state = 'pending' and attempts > 0)::int as later`;
      if (row && row.later > 0) server.clock.advance(10_000);
      return row?.queued === 0 && row.waiting === 0;
    },
    30_000,
    'the trackers to settle',
  );
}

/** The run's notification deliveries are done too (their GitHub calls are in the same stand-in). */
export async function deliveriesSettled(server: TestServer): Promise<void> {
  await waitUntil(
    async () => (await server.sql`select 1 from notification_deliveries where state = 'pending'`).length === 0,
    30_000,
    'the notifications to settle',
  );
}

/**
 * A project with environment `staging` whose failure groups get GitHub issues in acme/shop (created for
 * new groups, closed after two passing runs): its id and an API client with its key.
 */
export async function githubTrackedProject(server: TestServer): Promise<{ projectId: number; api: Api }> {
  const seeded = await seedProject(server.sql);
  await seedEnvironment(server.sql, seeded.projectId, 'staging');
  const api = client(server.url, seeded.key);
  const destination = await api.post('/api/notification-destinations', { type: 'github', repo: 'acme/shop', token: 'ghp_test' });
  if (destination.status !== 201) throw new Error(`the GitHub destination was refused: ${JSON.stringify(destination.body)}`);
  const settings = await api.put('/api/tracker-settings', {
    destination_id: destination.body.data.destination.id,
    create_for_new_groups: true,
    passes_to_resolve: 2,
    close_when_resolved: true,
  });
  if (settings.status !== 200) throw new Error(`the tracker settings were refused: ${JSON.stringify(settings.body)}`);
  return { projectId: seeded.projectId, api };
}
