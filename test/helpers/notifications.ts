import { attempt, attemptsOf, listedTest } from './attempts.ts';
import type { client } from './http.ts';
import { waitUntil } from './runs.ts';
import { testId } from './server.ts';

// Runs reported into environment `staging` for the destinations' tests (GitHub, GitLab), and the
// deliveries they make.

type Api = ReturnType<typeof client>;

/** A run of `branch` at `commit`, its `failing` tests failing on retry, each in a failure group of its own. */
export async function reportRun(api: Api, branch: string, commit: string, failing: number[], owners: Record<number, string[]> = {}): Promise<number> {
  const runId = (await api.post('/api/test-runs/report', { environment: 'staging', branch, commit })).body.data.test_run.id as number;
  const tests = [1, 2, 4];
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: tests.map((n) => listedTest(testId(n), { title: `test ${n}`, owners: owners[n] })) });
  const results = tests.flatMap((n) =>
    failing.includes(n)
      ? [
          attempt(testId(n), { final: null, status: 'failed' }),
          attempt(testId(n), { retry: 1, final: 'unexpected', status: 'failed', failureGroupId: `fg-${n}` }),
        ]
      : attemptsOf(testId(n), 'expected'),
  );
  await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results });
  for (const n of failing) await api.post(`/api/failure-groups/fg-${n}/members`, { test_run_id: runId, test_case_id: testId(n) });
  await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: failing.length > 0 ? 'failed' : 'passed' });
  return runId;
}

/** The run's first delivery, once none of its deliveries is pending. */
export async function settledDelivery(api: Api, runId: number) {
  const deliveries = async () => (await api.get(`/api/notification-deliveries?test_run_id=${runId}`)).body.data.deliveries as { state: string }[];
  await waitUntil(
    async () => {
      const now = await deliveries();
      return now.length > 0 && now.every((d) => d.state !== 'pending');
    },
    20_000,
    `the deliveries of run ${runId}`,
  );
  return (await deliveries())[0] as { state: string; attempts: number; last_error: string | null };
}
