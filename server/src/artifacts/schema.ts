import { z } from 'zod';
import type { AttachmentDeclaration, AttachmentDisposition, AttachmentsBody } from '@proctor/reporter/wire';
import { WIRE_LIMITS as LIMIT } from '@proctor/reporter/wire';
import { runnerTestId } from '../http/fields.ts';

// A MIME type as browsers and Playwright write it: type/subtype with optional parameters.
const contentType = z
  .string()
  .max(LIMIT.contentType)
  .regex(/^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/, 'must be a MIME type such as image/png');

export const attachmentDeclarationSchema = z
  .object({
    test_id: runnerTestId,
    retry: z.number().int().min(0).max(LIMIT.retries),
    name: z.string().min(1).max(LIMIT.attachmentName),
    content_type: contentType,
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be the lowercase hex sha256 of the bytes'),
    size_bytes: z.number().int().min(0),
  })
  .strict()
  .openapi('AttachmentDeclaration');

export const attachmentsBodySchema = z
  .object({ attachments: z.array(attachmentDeclarationSchema).min(1).max(LIMIT.attachmentsPerRequest) })
  .strict()
  .openapi('AttachmentsBody');

export const attachmentDispositionSchema = z
  .object({
    sha256: z.string(),
    status: z.enum(['upload', 'stored', 'refused']),
    upload_url: z.string().nullable().openapi({
      description: "Where to PUT the bytes (status upload), signed for one hour: relative to the server's base URL, or absolute (an object store)",
    }),
    upload_headers: z
      .record(z.string(), z.string())
      .openapi({ description: 'Headers the PUT must carry (an object store checks the sha256 of the bytes by one); empty when none' }),
    confirm_url: z.string().nullable().openapi({
      description:
        'After a PUT to an object store, POST here (no body, relative as upload_url) so that the server checks and records the bytes; null when the PUT alone does',
    }),
    reason: z.string().nullable(),
  })
  .openapi('AttachmentDisposition');

export const attachmentsAnswerSchema = z.object({ data: z.object({ attachments: z.array(attachmentDispositionSchema) }) });

/** An attachment as the API shows it, in each item of a run's `flattenedSummaryDetails`. */
export const attachmentViewSchema = z
  .object({
    retry: z.number().int(),
    name: z.string(),
    content_type: z.string(),
    size_bytes: z.number().int(),
    url: z.string().openapi({ description: 'Signed download URL, valid for one hour from the answer' }),
  })
  .openapi('Attachment');

export type AttachmentView = z.infer<typeof attachmentViewSchema>;
export type Declaration = z.infer<typeof attachmentDeclarationSchema>;

/** The reporter's wire types must be what these schemas accept and answer; a change on either side fails the type check. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const wireAgrees: [
  Same<Declaration, AttachmentDeclaration>,
  Same<z.infer<typeof attachmentsBodySchema>, AttachmentsBody>,
  Same<z.infer<typeof attachmentDispositionSchema>, AttachmentDisposition>,
] = [true, true, true];
void wireAgrees;
