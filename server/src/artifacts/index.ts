import type { AppDeps } from '../context.ts';
import type { Tx } from '../db.ts';
import { signedQueryString } from '../signing.ts';
import { showsInline } from './delivery.ts';
import type { AttachmentView } from './schema.ts';
import { listRunAttachments } from './store.ts';

export { artifactRoutes } from './routes.ts';
export { traceViewerLink, traceViewerRoutes } from './viewer-routes.ts';
export { showsInline };
export type { AttachmentView } from './schema.ts';

/** A run's stored attachments by test id, each with a download URL signed for an hour from `now`. */
export async function attachmentsByTest(
  sql: Tx,
  deps: Pick<AppDeps, 'config' | 'signingSecret'>,
  runId: number,
  now: Date,
): Promise<Map<string, AttachmentView[]>> {
  const byTest = new Map<string, AttachmentView[]>();
  for (const row of await listRunAttachments(sql, runId)) {
    const url = `${deps.config.publicUrl}/attachments/${row.id}/content?${signedQueryString(deps.signingSecret, `attachment:${row.id}`, now)}`;
    const view: AttachmentView = { retry: row.retry, name: row.name, content_type: row.content_type, size_bytes: row.size_bytes, url };
    const list = byTest.get(row.test_case_id);
    if (list) list.push(view);
    else byTest.set(row.test_case_id, [view]);
  }
  return byTest;
}
export { deleteRunAttachments, type Freed, removeQueuedBytes } from './expire.ts';
export { attachmentsToFree, queuedRemovals } from './store.ts';
