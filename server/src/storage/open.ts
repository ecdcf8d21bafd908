import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { type BlobStorage, FileStorage } from './blobs.ts';

/**
 * The storage the configuration names: the S3-compatible bucket when `PROCTOR_S3_BUCKET` is set
 * (the SDK is loaded only then), otherwise files under the data directory. Either way its folder
 * (`files/`, or `spool/` where uploads wait for the bucket) is the server's user's alone.
 */
export async function openStorage(config: Pick<Config, 'dataDir' | 's3'>): Promise<BlobStorage> {
  if (!config.s3) return new FileStorage(ownerOnlyFolder(path.join(config.dataDir, 'files')));
  const { S3Storage } = await import('./s3.ts');
  return S3Storage.open(config.s3, ownerOnlyFolder(path.join(config.dataDir, 'spool')));
}

/**
 * Made 0700, and set so when an earlier version left it 0755: the bytes of every attachment and
 * file are there, and the data directory is traversable by the user that runs suites.
 */
function ownerOnlyFolder(dir: string): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  return dir;
}
