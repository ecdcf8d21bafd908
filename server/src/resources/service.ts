import type { Readable } from 'node:stream';
import type { AppDeps } from '../context.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import { signedQueryString } from '../signing.ts';
import { SizeMismatchError } from '../storage/blobs.ts';
import type { Resource } from './schema.ts';
import * as store from './store.ts';

// A project's files: made pending with a signed upload URL (or a link), their bytes received by the
// server or straight into the bucket, confirmed, listed with signed download URLs, deleted with
// their bytes.

export type SignedAction = 'upload' | 'download';

type Deps = Pick<AppDeps, 'sql' | 'clock' | 'storage' | 'signingSecret' | 'config'>;

export interface NewFile {
  name: string;
  description: string | null;
  mimeType: string | null;
  sizeBytes: number | null;
  url: string | null;
  accessLevel: Resource['access_level'];
  createdBy: string | null;
}

export class Files {
  constructor(private readonly deps: Deps) {}

  /** A file's upload or download URL, signed for an hour: the signature is its only authority. */
  private signedUrl(action: SignedAction, id: number, now: Date): string {
    const path = action === 'upload' ? 'upload' : 'content';
    return `${this.deps.config.publicUrl}/files/${id}/${path}?${signedQueryString(this.deps.signingSecret, `${action}:${id}`, now)}`;
  }

  /** The API view: a signed download URL for stored files, the link itself for link-type files. */
  present(row: store.ResourceRow, now: Date): Resource {
    return {
      id: row.id,
      name: row.name,
      url: row.external_url ?? this.signedUrl('download', row.id, now),
      description: row.description,
      mime_type: row.mime_type,
      size_bytes: row.size_bytes,
      status: row.status,
      access_level: row.access_level,
      created_by: row.created_by,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }

  /** A new file, pending its bytes (with where to PUT them), or a link. */
  async create(projectId: number, given: NewFile): Promise<Resource & { upload_url?: string }> {
    const limit = this.deps.config.uploadLimitBytes;
    if (given.accessLevel && !given.url) throw new InvalidInputError('body.access_level: only link-type files (with url) have an access level');
    if (given.sizeBytes !== null && given.sizeBytes > limit) throw new InvalidInputError(`body.size_bytes: larger than the upload limit of ${limit} bytes`);
    const now = this.deps.clock();
    const isLink = given.url !== null;
    const row = await store.createResource(
      this.deps.sql,
      projectId,
      {
        name: given.name,
        description: given.description,
        mimeType: given.mimeType,
        sizeBytes: given.sizeBytes,
        externalUrl: given.url,
        accessLevel: isLink ? (given.accessLevel ?? 'read') : null,
        storageKey: isLink ? null : this.deps.storage.newKey(),
        createdBy: given.createdBy,
      },
      now,
    );
    const resource = this.present(row, now);
    return isLink ? resource : { ...resource, upload_url: await this.uploadUrl(row, now) };
  }

  /**
   * Where the bytes go: the server's signed URL, or straight into the bucket (the PATCH that
   * confirms the upload then checks what the bucket holds).
   */
  private async uploadUrl(row: store.ResourceRow, now: Date): Promise<string> {
    const { storage } = this.deps;
    if (!storage.direct) return this.signedUrl('upload', row.id, now);
    return (await storage.direct.uploadUrl(row.storage_key as string, { sizeBytes: row.size_bytes, sha256: null })).url;
  }

  async list(projectId: number, limit: number, offset: number): Promise<{ items: Resource[]; total: number }> {
    const now = this.deps.clock();
    const { rows, total } = await store.listResources(this.deps.sql, projectId, limit, offset);
    return { items: rows.map((row) => this.present(row, now)), total };
  }

  /** Renames or describes a file, or confirms its upload: a direct upload is checked against its declared size. */
  async update(projectId: number, id: number, change: Parameters<typeof store.updateResource>[3]): Promise<Resource> {
    const { sql } = this.deps;
    const existing = await store.getResource(sql, projectId, id);
    if (!existing) throw new NotFoundError('file not found');
    const now = this.deps.clock();
    if (change.status === 'uploaded' && existing.status === 'pending' && existing.stored_bytes === null) {
      const size = await this.storedDirectly(existing);
      if (size === null) throw new ConflictError('body.status: the file content has not been uploaded yet; PUT it to upload_url first');
      await store.recordStoredBytes(sql, existing.id, size, now);
    }
    const row = await store.updateResource(sql, projectId, id, change, now);
    if (!row) throw new NotFoundError('file not found');
    return this.present(row, now);
  }

  /** The size of what a direct upload stored, checked against the declared size_bytes; null when nothing is stored yet. */
  private async storedDirectly(row: store.ResourceRow): Promise<number | null> {
    const { storage } = this.deps;
    if (!storage.direct || !row.storage_key) return null;
    const stored = await storage.stat(row.storage_key);
    if (!stored) return null;
    if (row.size_bytes !== null && stored.sizeBytes !== row.size_bytes) {
      await storage.remove(row.storage_key);
      throw new InvalidInputError(`body.status: ${stored.sizeBytes} bytes were uploaded, but size_bytes is ${row.size_bytes}; upload the file again`);
    }
    return stored.sizeBytes;
  }

  /** Deletes a file and its stored bytes. */
  async remove(projectId: number, id: number): Promise<void> {
    const row = await store.deleteResource(this.deps.sql, projectId, id);
    if (!row) throw new NotFoundError('resource not found');
    if (row.storage_key) await this.deps.storage.remove(row.storage_key);
  }

  /** The file a signed URL names, when it holds bytes (not a link). */
  async signedFile(id: number): Promise<store.ResourceRow> {
    const row = await store.getResourceById(this.deps.sql, id);
    if (!row || !row.storage_key) throw new NotFoundError('file not found');
    return row;
  }

  /** The largest body an upload of `row` may have; a file confirmed as uploaded takes none. */
  acceptsUpload(row: store.ResourceRow): number {
    if (row.status === 'uploaded') throw new ConflictError('this file is already confirmed as uploaded');
    return row.size_bytes ?? this.deps.config.uploadLimitBytes;
  }

  /** Receives an upload's bytes into the file, whole or not at all; fails with TooLargeError past its limit. */
  async receive(row: store.ResourceRow, bytes: Readable): Promise<void> {
    let size: number;
    try {
      size = await this.deps.storage.write(row.storage_key as string, bytes, { maxBytes: this.acceptsUpload(row), exactBytes: row.size_bytes });
    } catch (error) {
      if (error instanceof SizeMismatchError) throw new InvalidInputError(`body: ${error.message}`);
      throw error;
    }
    await store.recordStoredBytes(this.deps.sql, row.id, size, this.deps.clock());
  }
}
