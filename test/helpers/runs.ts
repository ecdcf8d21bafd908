import { queuedRollups } from '../../server/src/analytics/index.ts';
import type { Sql } from '../../server/src/db.ts';
import { TERMINAL_STATES } from '../../server/src/states.ts';
import fs from 'node:fs';
import type { client } from './http.ts';

type Client = ReturnType<typeof client>;

/** Polls a run until it reaches one of `states` (default: any terminal state). */
export async function waitForRun(api: Client, runId: number, states: readonly string[] = TERMINAL_STATES, timeoutMs = 150_000) {
  const deadline = Date.now() + timeoutMs;
  let last: any = null;
  while (Date.now() < deadline) {
    const response = await api.get(`/api/test-runs/${runId}`);
    last = response.body?.data?.test_run;
    if (last && states.includes(last.testRun.state)) return last;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`run ${runId} did not reach ${states.join('/')} in time; last: ${JSON.stringify(last?.testRun)}`);
}

export async function trigger(api: Client, body: Record<string, unknown>): Promise<number> {
  const response = await api.put('/api/test-runs', body);
  if (response.status !== 200) throw new Error(`trigger answered ${response.status}: ${response.text}`);
  return response.body.data.test_run.id;
}

/** Processes of a run, found by the variables the executor gives every shard. */
export function runProcesses(serverUrl: string, runId: number): number[] {
  const needles = [Buffer.from(`PROCTOR_RUN_ID=${runId}\0`), Buffer.from(`PROCTOR_URL=${serverUrl}\0`)];
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = fs.readFileSync(`/proc/${entry}/environ`);
      if (needles.every((needle) => environ.includes(needle))) found.push(Number(entry));
    } catch {
      // gone
    }
  }
  return found;
}

export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 30_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Waits until every ended run is in the rollups (a job writes them right after runs end). */
export async function waitForRollups(sql: Sql, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await queuedRollups(sql)) > 0) {
    if (Date.now() > deadline) throw new Error(`rollups still queued after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A run's number in its project (#1 its first run): what pages and messages name it by. */
export async function runNumber(sql: Sql, runId: number): Promise<number> {
  const [row] = await sql<{ number: number }[]>`select number from test_runs where id = ${runId}`;
  if (!row) throw new Error(`no run ${runId}`);
  return row.number;
}

/**
 * The run a line links to (`…/runs/523?token=…`): its id, read from the link, never from the words
 * (they name the run by its number in its project). The first link of `text` when no line is given.
 */
export function runIdLinkedIn(text: string, line: RegExp = /./): number {
  const found = text
    .split('\n')
    .filter((l) => line.test(l))
    .map((l) => /\/runs\/(\d+)\?/.exec(l)?.[1])
    .find(Boolean);
  if (!found) throw new Error(`no link to a run in:\n${text}`);
  return Number(found);
}
