import type { Sql } from '../../server/src/db.ts';
import type { FinalOutcome, WireListedTest } from '../../reporter/src/api/wire.ts';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { attempt, attemptsOf, listedTest } from './attempts.ts';
import type { client } from './http.ts';
import { waitForRollups } from './runs.ts';
import { seedUser } from './server.ts';

// A digest's fixture project: runs reported one after the other, each test's outcome and duration
// known, so that a digest of them lists exactly the tests the fixture made turn, rise or slow.

/** A test's line in a run: how it ended and, when it passed, in how many milliseconds. */
export type Line = { outcome: FinalOutcome; duration: number };

export const pass = (duration = 200): Line => ({ outcome: 'expected', duration });
export const flaky: Line = { outcome: 'flaky', duration: 200 };
export const fail: Line = { outcome: 'unexpected', duration: 200 };

/** `ms` with a fixed noise of ±2.5% per run number, the same at every run of a file. */
export const wobbled = (ms: number, run: number) => Math.round(ms * (1 + ((run * 37) % 11) / 200 - 0.025));

/**
 * Reports runs of one environment, a commit each (a test that fails after passing broke on that
 * commit, it did not flip), and keeps their ids and numbers: `runIds[n]` is the n-th run's.
 */
export function fixtureRuns(api: ReturnType<typeof client>, sql: Sql, environment: string, listed: (id: string) => Partial<WireListedTest>) {
  const runIds: number[] = [0];
  const runNumbers: number[] = [0];
  async function report(tests: Record<string, Line>): Promise<number> {
    const run = (await api.post('/api/test-runs/report', { environment, commit: `c${runIds.length}` })).body.data.test_run;
    const ids = Object.keys(tests);
    await api.post(`/api/test-runs/${run.id}/shards/1/begin`, { tests: ids.map((id) => listedTest(id, listed(id))), complete: true });
    const results = ids.flatMap((id) => {
      const { outcome, duration } = tests[id]!;
      return outcome === 'expected' ? [attempt(id, { duration })] : attemptsOf(id, outcome);
    });
    const posted = await api.post(`/api/test-runs/${run.id}/results`, { shard: 1, results });
    if (posted.status !== 200) throw new Error(`results: ${posted.status} ${posted.text}`);
    const failed = Object.values(tests).some((line) => line.outcome === 'unexpected');
    const ended = await api.post(`/api/test-runs/${run.id}/shards/1/end`, { status: failed ? 'failed' : 'passed' });
    if (ended.status !== 200) throw new Error(`end: ${ended.status} ${ended.text}`);
    await waitForRollups(sql);
    runIds.push(run.id);
    runNumbers.push(run.number);
    return run.id;
  }
  return { report, runIds, runNumbers };
}

/** A dashboard session's cookie for a new user of the project with this role. */
export async function signedInCookie(server: { sql: Sql; url: string }, projectId: number, now: Date, role: 'admin' | 'viewer' = 'viewer'): Promise<string> {
  const { userId } = await seedUser(server.sql, [projectId], { role });
  const token = await createLoginLink(server.sql, userId, now);
  const signIn = await fetch(`${server.url}/sign-in/link?token=${token}`, { redirect: 'manual' });
  return (signIn.headers.get('set-cookie') as string).split(';')[0] as string;
}
