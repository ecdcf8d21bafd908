import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import { actingUserId, checkLegacyProjectId } from '../http/access.ts';
import { deliverStored } from '../http/deliver.ts';
import { HttpError, notFound } from '../http/errors.ts';
import { idParams } from '../http/fields.ts';
import { offsetOf, paginate } from '../http/pagination.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { requireSignature, signedQuery } from '../http/signed.ts';
import { TooLargeError } from '../storage/blobs.ts';
import { createResourceSchema, fileListResponse, fileResponse, resourceListQuery, resourceListResponse, resourceResponse, updateFileSchema } from './schema.ts';
import { Files } from './service.ts';

const TAG = 'Resources';

/** A project's files over the API, and their bytes through signed URLs. */
export function resourceRoutes(ctx: RouteContext, deps: AppDeps): void {
  const files = new Files(deps);
  const list = async (projectId: number, query: z.infer<typeof resourceListQuery>) => {
    const { items, total } = await files.list(projectId, query.per_page, offsetOf(query.page, query.per_page));
    return { items, pagination: paginate(total, query.page, query.per_page) };
  };
  /** A signed URL's file; its signature is its only authority. */
  const signedFile = (action: 'upload' | 'download', id: number, query: z.infer<typeof signedQuery>) => {
    requireSignature(deps.signingSecret, `${action}:${id}`, query, deps.clock());
    return files.signedFile(id);
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
      const resource = await files.create(scope.projectId, {
        name: body.name,
        description: body.description ?? null,
        mimeType: body.mime_type ?? null,
        sizeBytes: body.size_bytes ?? null,
        url: body.url ?? null,
        accessLevel: body.access_level ?? null,
        createdBy: actingUserId(scope),
      });
      return { data: { resource } };
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
      const { items, pagination } = await list(scope.projectId, query);
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
      const { items, pagination } = await list(scope.projectId, query);
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
    handler: async ({ params, body, scope }) => ({ data: { file: await files.update(scope.projectId, params.id, body) } }),
  });

  addRoute(ctx, {
    method: 'delete',
    path: '/api/resources/:id',
    tag: TAG,
    summary: 'Delete a resource and its stored bytes',
    params: idParams,
    response: z.object({ data: z.object({ result: z.object({ success: z.boolean() }) }) }),
    handler: async ({ params, scope }) => {
      await files.remove(scope.projectId, params.id);
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
      const row = await signedFile('upload', params.id, query);
      const limit = files.acceptsUpload(row);
      const declared = Number(req.get('content-length') ?? Number.NaN);
      // Past the limit the rest of the body is read off and dropped; the connection closes after the answer.
      const tooLarge = (what: string) => {
        res.setHeader('connection', 'close');
        return new HttpError(413, `body: ${what} than ${limit} bytes`);
      };
      if (declared > limit) throw tooLarge(`${declared} bytes is larger`);
      await files.receive(row, req).catch((error: unknown) => {
        throw error instanceof TooLargeError ? tooLarge('larger') : error;
      });
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
      const row = await signedFile('download', params.id, query);
      if (row.stored_bytes === null) throw notFound('file content');
      await deliverStored(res, deps.storage, row.storage_key as string, {
        'content-type': row.mime_type ?? 'application/octet-stream',
        'content-length': String(row.stored_bytes),
        'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(row.name)}`,
        'x-content-type-options': 'nosniff',
      });
    },
  });
}
