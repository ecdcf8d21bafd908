import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import { HttpError, notFound, ValidationError } from '../http/errors.ts';
import { idParams } from '../http/fields.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { requireSignature, signedQuery } from '../http/signed.ts';
import { deliveryHeaders } from './delivery.ts';
import { declareAttachments } from './declare.ts';
import { attachmentsAnswerSchema, attachmentsBodySchema } from './schema.ts';
import { receiveBlob } from './receive.ts';
import * as store from './store.ts';

const TAG = 'Artifacts';

export function artifactRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock, storage, signingSecret } = deps;

  addRoute(ctx, {
    method: 'post',
    path: '/api/test-runs/:id/attachments',
    needs: 'report',
    tag: TAG,
    summary:
      "Declare attempts' attachments by the sha256 of their bytes: each answer says to upload them to a signed URL, that the project holds them already, or why they are refused",
    params: idParams,
    body: attachmentsBodySchema,
    response: attachmentsAnswerSchema,
    handler: async ({ params, body, scope }) => {
      const dispositions = await declareAttachments(deps, scope.projectId, params.id, body.attachments);
      return { data: { attachments: dispositions } };
    },
  });

  addRoute(ctx, {
    method: 'put',
    path: '/artifacts/:id/upload',
    tag: TAG,
    summary: "Upload an attachment's bytes to the signed upload_url its declaration answered (no key: the signature authorises)",
    public: true,
    params: idParams,
    query: signedQuery,
    response: z.object({ data: z.object({ stored: z.boolean() }) }),
    fails: { 413: 'The body is larger than the declared size_bytes' },
    handler: async ({ params, query, req, res }) => {
      requireSignature(signingSecret, `artifact-upload:${params.id}`, query, clock());
      const blob = await store.getBlob(sql, params.id);
      if (!blob) throw notFound('artifact');
      if (blob.storage_key) return { data: { stored: true } };
      const declared = Number(req.get('content-length') ?? Number.NaN);
      if (declared > blob.size_bytes) {
        res.setHeader('connection', 'close');
        throw new HttpError(413, `body: ${declared} bytes is larger than the declared ${blob.size_bytes} bytes`);
      }
      const outcome = await receiveBlob(storage, blob, req);
      if (outcome.kind === 'too-large') {
        res.setHeader('connection', 'close');
        throw new HttpError(413, `body: larger than the declared ${blob.size_bytes} bytes`);
      }
      if (outcome.kind === 'mismatch') throw new ValidationError(`body: ${outcome.message}`);
      if (!(await store.markStored(sql, blob.id, outcome.key, clock()))) await storage.remove(outcome.key);
      return { data: { stored: true } };
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/attachments/:id/content',
    tag: TAG,
    summary: 'Download an attachment through its signed URL: images and video inline, anything else as a file to save',
    public: true,
    params: idParams,
    query: signedQuery,
    produces: 'application/octet-stream',
    handler: async ({ params, query, res }) => {
      requireSignature(signingSecret, `attachment:${params.id}`, query, clock());
      const attachment = await store.getAttachment(sql, params.id);
      if (!attachment) throw notFound('attachment');
      for (const [name, value] of Object.entries(deliveryHeaders(attachment.name, attachment.content_type, attachment.size_bytes))) res.setHeader(name, value);
      await new Promise<void>((resolve, reject) => {
        storage.read(attachment.storage_key).on('error', reject).pipe(res).on('finish', resolve).on('error', reject);
      });
    },
  });
}
