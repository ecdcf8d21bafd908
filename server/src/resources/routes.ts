import { z } from 'zod';
import { actingUserId, checkLegacyProjectId } from '../http/access.ts';
import type { AppDeps } from '../context.ts';
import { HttpError, notFound, ValidationError } from '../http/errors.ts';
import { idParams } from '../http/fields.ts';
import { offsetOf, paginate } from '../http/pagination.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import {
  createResourceSchema,
  fileListResponse,
  fileResponse,
  type Resource,
  resourceListQuery,
  resourceListResponse,
  resourceResponse,
  updateFileSchema,
} from './schema.ts';
import { signedQueryString } from '../signing.ts';
import { deliverStored } from '../http/deliver.ts';
import { requireSignature, signedQuery } from '../http/signed.ts';
import { TooLargeError, SizeMismatchError } from '../storage/blobs.ts';
import * as store from './store.ts';

const TAG = 'Resources';

type SignedAction = 'upload' | 'download';

export function resourceRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock, storage, signingSecret } = deps;
  const uploadLimit = deps.config.uploadLimitBytes;

  /** A file's upload or download URL, signed for an hour: the signature is its only authority. */
  const signedUrl = (action: SignedAction, id: number, now: Date) =>
    `${deps.config.publicUrl}/files/${id}/${action === 'upload' ? 'upload' : 'content'}?${signedQueryString(signingSecret, `${action}:${id}`, now)}`;

  /**
   * Where the bytes go: the server's signed URL, or straight into the bucket (the PATCH that
   * confirms the upload then checks what the bucket holds).
   */
  const uploadUrl = async (row: store.ResourceRow, now: Date): Promise<string> => {
    if (!storage.direct) return signedUrl('upload', row.id, now);
    return (await storage.direct.uploadUrl(row.storage_key as string, { sizeBytes: row.size_bytes, sha256: null })).url;
  };

  /** The size of what a direct upload stored, checked against the declared size_bytes; null when nothing is stored yet. */
  const storedDirectly = async (row: store.ResourceRow): Promise<number | null> => {
    if (!storage.direct || !row.storage_key) return null;
    const stored = await storage.stat(row.storage_key);
    if (!stored) return null;
    if (row.size_bytes !== null && stored.sizeBytes !== row.size_bytes) {
      await storage.remove(row.storage_key);
      throw new ValidationError(`body.status: ${stored.sizeBytes} bytes were uploaded, but size_bytes is ${row.size_bytes}; upload the file again`);
    }
    return stored.sizeBytes;
  };

  /** The API view: a signed download URL for stored files, the link itself for link-type files. */
  const present = (row: store.ResourceRow, now: Date): Resource => ({
    id: row.id,
    name: row.name,
    url: row.external_url ?? signedUrl('download', row.id, now),
    description: row.description,
    mime_type: row.mime_type,
    size_bytes: row.size_bytes,
    status: row.status,
    access_level: row.access_level,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  });

  const list = async (projectId: number, page: number, perPage: number) => {
    const now = clock();
    const { rows, total } = await store.listResources(sql, projectId, perPage, offsetOf(page, perPage));
    return { items: rows.map((row) => present(row, now)), pagination: paginate(total, page, perPage) };
  };

  /** A signed URL's resource, or 403 for a tampered or expired signature. */
  const signedResource = async (action: SignedAction, id: number, query: z.infer<typeof signedQuery>) => {
    requireSignature(signingSecret, `${action}:${id}`, query, clock());
    const row = await store.getResourceById(sql, id);
    if (!row || !row.storage_key) throw notFound('file');
    return row;
  };

  addRoute(ctx, {
    method: 'post',
    path: '/api/resources',
    needs: 'member',
    tag: TAG,
    summary: 'Create a resource: a file to upload (pending, with upload_url) or an external link (url)',
    body: createResourceSchema,
    response: resourceResponse,
    handler: async ({ body, scope }) => {
      checkLegacyProjectId(scope, body.project_id);
      if (body.access_level && !body.url) throw new ValidationError('body.access_level: only link-type files (with url) have an access level');
      if (body.size_bytes !== undefined && body.size_bytes > uploadLimit) {
        throw new ValidationError(`body.size_bytes: larger than the upload limit of ${uploadLimit} bytes`);
      }
      const now = clock();
      const isLink = body.url !== undefined;
      const row = await store.createResource(
        sql,
        scope.projectId,
        {
          name: body.name,
          description: body.description ?? null,
          mimeType: body.mime_type ?? null,
          sizeBytes: body.size_bytes ?? null,
          externalUrl: body.url ?? null,
          accessLevel: isLink ? (body.access_level ?? 'read') : null,
          storageKey: isLink ? null : storage.newKey(),
          createdBy: actingUserId(scope),
        },
        now,
      );
      const resource = present(row, now);
      return { data: { resource: isLink ? resource : { ...resource, upload_url: await uploadUrl(row, now) } } };
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/api/resources',
    tag: TAG,
    summary: 'List resources with signed download URLs',
    query: resourceListQuery,
    response: resourceListResponse,
    handler: async ({ query, scope }) => {
      const { items, pagination } = await list(scope.projectId, query.page, query.per_page);
      return { data: { resources: items }, pagination };
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/api/files',
    tag: TAG,
    summary: 'List files with signed download URLs',
    query: resourceListQuery,
    response: fileListResponse,
    handler: async ({ query, scope }) => {
      const { items, pagination } = await list(scope.projectId, query.page, query.per_page);
      return { data: { files: items }, pagination };
    },
  });

  addRoute(ctx, {
    method: 'patch',
    path: '/api/files/:id',
    needs: 'member',
    tag: TAG,
    summary: 'Rename, describe, or confirm an upload (status uploaded)',
    params: idParams,
    body: updateFileSchema,
    response: fileResponse,
    handler: async ({ params, body, scope }) => {
      const existing = await store.getResource(sql, scope.projectId, params.id);
      if (!existing) throw notFound('file');
      const now = clock();
      if (body.status === 'uploaded' && existing.status === 'pending' && existing.stored_bytes === null) {
        const size = await storedDirectly(existing);
        if (size === null) throw new HttpError(409, 'body.status: the file content has not been uploaded yet; PUT it to upload_url first');
        await store.recordStoredBytes(sql, existing.id, size, now);
      }
      const row = await store.updateResource(sql, scope.projectId, params.id, body, now);
      if (!row) throw notFound('file');
      return { data: { file: present(row, now) } };
    },
  });

  addRoute(ctx, {
    method: 'delete',
    path: '/api/resources/:id',
    tag: TAG,
    summary: 'Delete a resource and its stored bytes',
    params: idParams,
    response: z.object({ data: z.object({ result: z.object({ success: z.boolean() }) }) }),
    handler: async ({ params, scope }) => {
      const row = await store.deleteResource(sql, scope.projectId, params.id);
      if (!row) throw notFound('resource');
      if (row.storage_key) await storage.remove(row.storage_key);
      return { data: { result: { success: true } } };
    },
  });

  addRoute(ctx, {
    method: 'put',
    path: '/files/:id/upload',
    tag: TAG,
    summary: "Upload a file's bytes to its presigned upload_url (no key: the signature authorises)",
    public: true,
    params: idParams,
    query: signedQuery,
    response: z.object({ data: z.object({ success: z.boolean() }) }),
    handler: async ({ params, query, req, res }) => {
      const row = await signedResource('upload', params.id, query);
      if (row.status === 'uploaded') throw new HttpError(409, 'this file is already confirmed as uploaded');
      const limit = row.size_bytes ?? uploadLimit;
      const declared = Number(req.get('content-length') ?? Number.NaN);
      if (declared > limit) {
        res.setHeader('connection', 'close');
        throw new HttpError(413, `body: ${declared} bytes is larger than ${limit} bytes`);
      }
      let size: number;
      try {
        size = await storage.write(row.storage_key as string, req, { maxBytes: limit, exactBytes: row.size_bytes });
      } catch (error) {
        if (error instanceof TooLargeError) {
          // The rest of the body is read off and dropped; the connection closes after the answer.
          res.setHeader('connection', 'close');
          throw new HttpError(413, `body: larger than ${limit} bytes`);
        }
        if (error instanceof SizeMismatchError) throw new ValidationError(`body: ${error.message}`);
        throw error;
      }
      await store.recordStoredBytes(sql, row.id, size, clock());
      return { data: { success: true } };
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/files/:id/content',
    tag: TAG,
    summary: 'Download a file through its signed URL, with its stored MIME type; with an object store, a redirect to the bucket',
    public: true,
    params: idParams,
    query: signedQuery,
    produces: 'application/octet-stream',
    alsoAnswers: { 302: 'A presigned URL of the object store, valid for one hour' },
    handler: async ({ params, query, res }) => {
      const row = await signedResource('download', params.id, query);
      if (row.stored_bytes === null) throw notFound('file content');
      await deliverStored(res, storage, row.storage_key as string, {
        'content-type': row.mime_type ?? 'application/octet-stream',
        'content-length': String(row.stored_bytes),
        'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(row.name)}`,
        'x-content-type-options': 'nosniff',
      });
    },
  });
}
