import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import { HttpError, notFound, ValidationError } from '../http/errors.ts';
import { idParams } from '../http/fields.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { deliverStored } from '../http/deliver.ts';
import { requireSignature, signedQuery } from '../http/signed.ts';
import { confirmDirectUpload } from './confirm.ts';
import { deliveryHeaders } from './delivery.ts';
import { declareAttachments } from './declare.ts';
import { attachmentsAnswerSchema, attachmentsBodySchema } from './schema.ts';
import { receiveBlob } from './receive.ts';
import * as store from './store.ts';

const TAG = 'Artifacts';

/** `via=server`: the bytes come through the server from any storage (the trace viewer's service worker fetches on this origin only). */
const downloadQuery = signedQuery.extend({ via: z.enum(['server']).optional() });

export function artifactRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock, storage, signingSecret } = deps;

  /** The blob an upload URL names, or 403 for a tampered or expired signature. */
  const uploadedBlob = async (id: number, query: z.infer<typeof signedQuery>) => {
    requireSignature(signingSecret, `artifact-upload:${id}`, query, clock());
    const blob = await store.getBlob(sql, id);
    if (!blob) throw notFound('artifact');
    return blob;
  };

  addRoute(ctx, {
    method: 'post',
    path: '/api/test-runs/:id/attachments',
    needs: 'member',
    run: ({ params }) => params.id,
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
    handler: async ({ params, query, req, res, signal }) => {
      const blob = await uploadedBlob(params.id, query);
      if (blob.storage_key) return { data: { stored: true } };
      const declared = Number(req.get('content-length') ?? Number.NaN);
      if (declared > blob.size_bytes) {
        res.setHeader('connection', 'close');
        throw new HttpError(413, `body: ${declared} bytes is larger than the declared ${blob.size_bytes} bytes`);
      }
      const outcome = await receiveBlob(storage, blob, req, signal);
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
    method: 'post',
    path: '/artifacts/:id/confirm',
    tag: TAG,
    summary:
      "Confirm an upload that went straight to the object store (the confirm_url of its declaration): the server checks the stored bytes' size and sha256 and records them",
    public: true,
    params: idParams,
    query: signedQuery,
    response: z.object({ data: z.object({ stored: z.boolean() }) }),
    fails: { 409: 'Nothing has been uploaded to upload_url yet, or the server takes uploads itself' },
    handler: async ({ params, query }) => {
      const blob = await uploadedBlob(params.id, query);
      if (blob.storage_key) return { data: { stored: true } };
      if (!storage.direct) throw new HttpError(409, 'nothing to confirm: this server stores the bytes PUT to upload_url itself');
      const outcome = await confirmDirectUpload(storage, blob);
      if (outcome.kind === 'missing') throw new HttpError(409, 'nothing is stored at upload_url yet: PUT the bytes there first');
      if (outcome.kind === 'mismatch') throw new ValidationError(`body: ${outcome.message}`);
      // One key per sha256: an upload beside this one that recorded it first recorded the same object.
      await store.markStored(sql, blob.id, outcome.key, clock());
      return { data: { stored: true } };
    },
  });

  addRoute(ctx, {
    method: 'get',
    path: '/attachments/:id/content',
    tag: TAG,
    summary:
      'Download an attachment through its signed URL: images and video inline, anything else as a file to save. With an object store, a redirect to the bucket, unless via=server',
    public: true,
    params: idParams,
    query: downloadQuery,
    produces: 'application/octet-stream',
    alsoAnswers: { 302: 'A presigned URL of the object store, valid for one hour' },
    handler: async ({ params, query, res }) => {
      requireSignature(signingSecret, `attachment:${params.id}`, query, clock());
      const attachment = await store.getAttachment(sql, params.id);
      if (!attachment) throw notFound('attachment');
      const headers = deliveryHeaders(attachment.name, attachment.content_type, attachment.size_bytes);
      await deliverStored(res, storage, attachment.storage_key, headers, query.via === 'server');
    },
  });
}
