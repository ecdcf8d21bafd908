import path from 'node:path';
import type { Config } from '../config.ts';
import { type BlobStorage, FileStorage } from './blobs.ts';

/**
 * The storage the configuration names: the S3-compatible bucket when `PROCTOR_S3_BUCKET` is set
 * (the SDK is loaded only then), otherwise files under the data directory.
 */
export async function openStorage(config: Pick<Config, 'dataDir' | 's3'>): Promise<BlobStorage> {
  if (!config.s3) return new FileStorage(path.join(config.dataDir, 'files'));
  const { S3Storage } = await import('./s3.ts');
  return S3Storage.open(config.s3, path.join(config.dataDir, 'spool'));
}
