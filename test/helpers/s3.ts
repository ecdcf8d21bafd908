import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

export interface LocalS3 {
  endpoint: string;
  bucket: string;
  /** The server's settings for this bucket, credentials in the standard AWS variables. */
  env: Record<string, string>;
  /** The keys of the bucket's objects, read from the store's own folder. */
  keys(): string[];
  close(): Promise<void>;
}

const BUCKET = 'proctor-test';

/** An S3-compatible server (s3rver) on loopback, with one empty bucket, kept in a folder of its own. */
export async function startLocalS3(): Promise<LocalS3> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: BUCKET, configs: [] }] });
  const { port } = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket: BUCKET,
    env: {
      PROCTOR_S3_BUCKET: BUCKET,
      PROCTOR_S3_ENDPOINT: endpoint,
      PROCTOR_S3_REGION: 'us-east-1',
      // s3rver's fixed credentials.
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    },
    keys: () => objectKeys(path.join(directory, BUCKET)),
    close: async () => {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** s3rver keeps an object `a/b` as the folder `a/b._S3rver_object` beside its metadata. */
function objectKeys(bucketDir: string): string[] {
  if (!fs.existsSync(bucketDir)) return [];
  return (fs.readdirSync(bucketDir, { recursive: true }) as string[])
    .filter((name) => name.endsWith('._S3rver_object'))
    .map((name) => name.slice(0, -'._S3rver_object'.length))
    .sort();
}
