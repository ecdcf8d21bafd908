import type { AttachmentDisposition } from '@proctor/reporter/wire';
import type { AppDeps } from '../context.ts';
import { NotFoundError } from '../errors.ts';
import { signedQueryString } from '../signing.ts';
import type { Declaration } from './schema.ts';
import * as store from './store.ts';

type Deps = Pick<AppDeps, 'sql' | 'clock' | 'config' | 'signingSecret'>;

/**
 * Records a batch of attachments against the project's blobs, and says for each whether its bytes
 * are to be uploaded (a signed URL), are stored already (the same bytes, by sha256, are kept once
 * per project), or are refused.
 */
export async function declareAttachments(deps: Deps, projectId: number, runId: number, declarations: Declaration[]): Promise<AttachmentDisposition[]> {
  const { sql, config, signingSecret } = deps;
  // Relative to the URL the reporter reached the server at: PUBLIC_URL may name another (or be unset).
  const now = deps.clock();
  const limit = config.uploadLimitBytes;
  return sql.begin(async (tx) => {
    if (!(await store.runExists(tx, projectId, runId))) throw new NotFoundError('test run not found');
    const accepted = declarations.filter((d) => d.size_bytes <= limit);
    const blobs = accepted.length > 0 ? await store.blobsFor(tx, projectId, accepted, now) : new Map<string, store.BlobRow>();
    const dispositions = declarations.map((declaration): AttachmentDisposition & { blobId: number | null } => {
      const refuse = (reason: string) => ({ sha256: declaration.sha256, status: 'refused' as const, upload_url: null, reason, blobId: null });
      if (declaration.size_bytes > limit) return refuse(`${declaration.size_bytes} bytes is larger than the server's limit of ${limit} bytes`);
      const blob = blobs.get(declaration.sha256) as store.BlobRow;
      if (blob.size_bytes !== declaration.size_bytes) return refuse(`size_bytes ${declaration.size_bytes} differs from the ${blob.size_bytes} bytes of this sha256`);
      if (blob.storage_key) return { sha256: declaration.sha256, status: 'stored', upload_url: null, reason: null, blobId: blob.id };
      const query = signedQueryString(signingSecret, `artifact-upload:${blob.id}`, now);
      return { sha256: declaration.sha256, status: 'upload', upload_url: `artifacts/${blob.id}/upload?${query}`, reason: null, blobId: blob.id };
    });
    await store.recordAttachments(
      tx,
      projectId,
      runId,
      declarations.flatMap((declaration, i) => {
        const blobId = dispositions[i]?.blobId;
        return blobId ? [{ declaration, blobId }] : [];
      }),
      now,
    );
    return dispositions.map(({ blobId: _blobId, ...disposition }) => disposition);
  });
}
