import { setTimeout as sleep } from 'node:timers/promises';
import type { Sql } from '../db.ts';
import { ConflictError } from '../errors.ts';
import { getSync, requestSync } from './store.ts';

const FIRST_POLL_MS = 50;
const LONGEST_POLL_MS = 500;

/**
 * Records that the environment is to be synced (or joins the job already open) and waits on the
 * job for at most `waitMs`: `done`, or `going-on` past the bound. A repository that refused is a
 * conflict that says why; the work itself runs in a server that executes runs, never here.
 */
export async function syncAndWait(
  sql: Sql,
  target: { projectId: number; environmentId: number },
  options: { now: Date; waitMs: number; wake: () => void },
): Promise<'done' | 'going-on'> {
  const job = await requestSync(sql, target.projectId, target.environmentId, options.now);
  options.wake();
  const deadline = Date.now() + options.waitMs;
  let pause = FIRST_POLL_MS;
  for (;;) {
    const seen = await getSync(sql, job.id);
    if (!seen) throw new Error(`sync job ${job.id} disappeared`);
    if (seen.state === 'done') return 'done';
    if (seen.state === 'failed') {
      if (seen.failure === 'repository') throw new ConflictError(`the test repository could not be read: ${seen.error}`);
      throw new Error(`sync job ${job.id} failed: ${seen.error}`);
    }
    const left = deadline - Date.now();
    if (left <= 0) return 'going-on';
    await sleep(Math.min(pause, left));
    pause = Math.min(pause * 2, LONGEST_POLL_MS);
  }
}
