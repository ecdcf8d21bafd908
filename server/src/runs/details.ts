import { attachmentsByTest } from '../artifacts/index.ts';
import type { AppDeps } from '../context.ts';
import type { Tx } from '../db.ts';
import type { SummaryDetail } from './schema.ts';
import { getSummaryDetails } from './store.ts';

/** A run's tests as the API and the run page show them: each with its attachments, their URLs signed from `now`. */
export async function runDetails(sql: Tx, deps: Pick<AppDeps, 'config' | 'signingSecret'>, runId: number, now: Date): Promise<SummaryDetail[]> {
  const attachments = await attachmentsByTest(sql, deps, runId, now);
  return (await getSummaryDetails(sql, runId)).map((detail) => ({ ...detail, attachments: attachments.get(detail.test_case_id) ?? [] }));
}
