import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Settings } from '../config.ts';
import { URL_LIFETIME_MS } from '../signing.ts';
import { type BlobStorage, type DirectTransfer, spool, type StoredObject, type WriteLimits } from './blobs.ts';

export class StorageUnreachableError extends Error {}

const PRESIGNED_SECONDS = URL_LIFETIME_MS / 1000;

/**
 * Uploaded bytes in an S3-compatible bucket. Clients upload and download by presigned URLs; what
 * goes through the server (a file PUT to the server's own URL) is spooled to disk first, because a
 * PUT to S3 needs its length before its body.
 */
export class S3Storage implements BlobStorage {
  readonly direct: DirectTransfer;

  private constructor(
    private readonly client: S3Client,
    private readonly settings: S3Settings,
    private readonly spoolDir: string,
    origin: string,
  ) {
    this.direct = {
      origin,
      uploadUrl: (key, expected) => this.presignedUpload(key, expected),
      downloadUrl: (key, response) => this.presignedDownload(key, response),
    };
  }

  /** Checks that the bucket answers, so that a wrong setting stops the server at its start. */
  static async open(settings: S3Settings, spoolDir: string): Promise<S3Storage> {
    const client = new S3Client({
      region: settings.region,
      ...(settings.credentials ? { credentials: settings.credentials } : {}),
      ...(settings.endpoint ? { endpoint: settings.endpoint, forcePathStyle: true } : {}),
      // The SDK's default adds CRC32 trailers in aws-chunked bodies, which stores other than AWS
      // (and presigned URLs) do not all take; the sha256 of an upload is checked by its own header.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    try {
      await client.send(new HeadBucketCommand({ Bucket: settings.bucket }));
    } catch (error) {
      client.destroy();
      throw new StorageUnreachableError(`PROCTOR_S3_BUCKET ${settings.bucket}${settings.endpoint ? ` at ${settings.endpoint}` : ''}: ${describe(error)}`);
    }
    fs.mkdirSync(spoolDir, { recursive: true, mode: 0o700 });
    const sample = await getSignedUrl(client, new GetObjectCommand({ Bucket: settings.bucket, Key: `${settings.prefix}origin` }), { expiresIn: 60 });
    return new S3Storage(client, settings, spoolDir, new URL(sample).origin);
  }

  newKey(): string {
    return randomBytes(16).toString('hex');
  }

  private objectKey(key: string): string {
    if (!/^[0-9a-z][0-9a-z/-]*$/.test(key) || key.includes('//')) throw new Error('invalid storage key');
    return `${this.settings.prefix}${key}`;
  }

  async write(key: string, content: Readable, limits: WriteLimits): Promise<number> {
    const objectKey = this.objectKey(key);
    const file = path.join(this.spoolDir, `${randomBytes(8).toString('hex')}.partial`);
    try {
      const size = await spool(content, file, limits);
      await this.client.send(new PutObjectCommand({ Bucket: this.settings.bucket, Key: objectKey, Body: fs.createReadStream(file), ContentLength: size }));
      return size;
    } finally {
      await fs.promises.rm(file, { force: true });
    }
  }

  async open(key: string): Promise<Readable> {
    const answer = await this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }));
    return answer.Body as Readable;
  }

  async stat(key: string): Promise<StoredObject | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key), ChecksumMode: 'ENABLED' }));
      // A multipart object's checksum ends in -<parts>: a checksum of checksums, not of the bytes.
      const checksum = head.ChecksumSHA256 && !head.ChecksumSHA256.includes('-') ? Buffer.from(head.ChecksumSHA256, 'base64').toString('hex') : null;
      return { sizeBytes: head.ContentLength ?? 0, sha256: checksum };
    } catch (error) {
      if (statusOf(error) === 404) return null;
      throw error;
    }
  }

  async remove(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }));
  }

  private async presignedUpload(
    key: string,
    expected: { sizeBytes: number | null; sha256: string | null },
  ): Promise<{ url: string; headers: Record<string, string> }> {
    const checksum = expected.sha256 ? Buffer.from(expected.sha256, 'hex').toString('base64') : null;
    const command = new PutObjectCommand({
      Bucket: this.settings.bucket,
      Key: this.objectKey(key),
      ...(expected.sizeBytes !== null ? { ContentLength: expected.sizeBytes } : {}),
      ...(checksum ? { ChecksumSHA256: checksum } : {}),
    });
    // The checksum stays a signed header: the store then refuses bytes that do not hash to it.
    const url = await getSignedUrl(this.client, command, { expiresIn: PRESIGNED_SECONDS, unhoistableHeaders: new Set(['x-amz-checksum-sha256']) });
    return { url, headers: checksum ? { 'x-amz-checksum-sha256': checksum } : {} };
  }

  private presignedDownload(key: string, response: { contentType: string; contentDisposition: string; cacheControl: string }) {
    const command = new GetObjectCommand({
      Bucket: this.settings.bucket,
      Key: this.objectKey(key),
      ResponseContentType: response.contentType,
      ResponseContentDisposition: response.contentDisposition,
      ResponseCacheControl: response.cacheControl,
    });
    return getSignedUrl(this.client, command, { expiresIn: PRESIGNED_SECONDS });
  }
}

function statusOf(error: unknown): number | null {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? null;
}

function describe(error: unknown): string {
  const status = statusOf(error);
  const message = error instanceof Error ? error.message || error.name : String(error);
  return status ? `${status} ${message}` : message;
}
