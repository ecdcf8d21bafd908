import type { AttachmentDisposition } from '@proctor/reporter/wire';
import type { AppDeps } from '../context.ts';
import type { Tx } from '../db.ts';
import { NotFoundError } from '../errors.ts';
import { signedQueryString } from '../signing.ts';
import { directUploadKey } from './confirm.ts';
import type { Declaration } from './schema.ts';
import * as store from './store.ts';

type Deps = Pick<AppDeps, 'sql' | 'clock' | 'config' | 'signingSecret' | 'storage'>;

type Decided = { kind: 'refused'; reason: string } | { kind: 'stored'; blob: store.BlobRow } | { kind: 'upload'; blob: store.BlobRow };

/**
 * Records a batch of attachments against the project's blobs, and says for each whether its bytes
 * are to be uploaded (a signed URL), are stored already (the same bytes, by sha256, are kept once
 * per project), or are refused.
 */
export async function declareAttachments(deps: Deps, projectId: number, runId: number, declarations: Declaration[]): Promise<AttachmentDisposition[]> {
  const now = deps.clock();
  const decided = await deps.sql.begin(async (tx) => {
    if (!(await store.runExists(tx, projectId, runId))) throw new NotFoundError('test run not found');
    const decisions = await decide(tx, deps.config.uploadLimitBytes, projectId, declarations, now);
    await store.recordAttachments(
      tx,
      projectId,
      runId,
      declarations.flatMap((declaration, i) => {
        const decision = decisions[i] as Decided;
        return decision.kind === 'refused' ? [] : [{ declaration, blobId: decision.blob.id }];
      }),
      now,
    );
    return decisions;
  });
  // Presigning may fetch credentials: after the transaction, not inside it.
  return Promise.all(declarations.map((declaration, i) => disposition(deps, declaration, decided[i] as Decided, now)));
}

async function decide(tx: Tx, limit: number, projectId: number, declarations: Declaration[], now: Date): Promise<Decided[]> {
  const accepted = declarations.filter((d) => d.size_bytes <= limit);
  const blobs = accepted.length > 0 ? await store.blobsFor(tx, projectId, accepted, now) : new Map<string, store.BlobRow>();
  return declarations.map((declaration): Decided => {
    if (declaration.size_bytes > limit)
      return { kind: 'refused', reason: `${declaration.size_bytes} bytes is larger than the server's limit of ${limit} bytes` };
    const blob = blobs.get(declaration.sha256) as store.BlobRow;
    if (blob.size_bytes !== declaration.size_bytes) {
      return { kind: 'refused', reason: `size_bytes ${declaration.size_bytes} differs from the ${blob.size_bytes} bytes of this sha256` };
    }
    return blob.storage_key ? { kind: 'stored', blob } : { kind: 'upload', blob };
  });
}

/**
 * Upload URLs are relative to the URL the reporter reached the server at (PUBLIC_URL may name
 * another, or be unset), or point straight into the bucket, with a confirmation back here.
 */
async function disposition(deps: Deps, declaration: Declaration, decided: Decided, now: Date): Promise<AttachmentDisposition> {
  const answer = { sha256: declaration.sha256, upload_url: null, upload_headers: {}, confirm_url: null, reason: null };
  if (decided.kind === 'refused') return { ...answer, status: 'refused', reason: decided.reason };
  if (decided.kind === 'stored') return { ...answer, status: 'stored' };
  const { blob } = decided;
  const query = signedQueryString(deps.signingSecret, `artifact-upload:${blob.id}`, now);
  const direct = deps.storage.direct;
  if (!direct) return { ...answer, status: 'upload', upload_url: `artifacts/${blob.id}/upload?${query}` };
  const { url, headers } = await direct.uploadUrl(directUploadKey(blob), { sizeBytes: blob.size_bytes, sha256: blob.sha256 });
  return { ...answer, status: 'upload', upload_url: url, upload_headers: headers, confirm_url: `artifacts/${blob.id}/confirm?${query}` };
}
