import { z } from 'zod';
import { bodyId } from '../http/fields.ts';
import { pagination } from '../http/openapi.ts';
import { paginationQuery } from '../http/pagination.ts';

export const accessLevel = z.enum(['read_write', 'read', 'none']);

export const resourceSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    url: z.string(),
    description: z.string().nullable(),
    mime_type: z.string().nullable(),
    size_bytes: z.number().int().nullable(),
    status: z.enum(['pending', 'uploaded']),
    access_level: accessLevel.nullable(),
    created_by: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    upload_url: z.string().optional(),
  })
  .openapi('Resource');

export const createResourceSchema = z
  .object({
    project_id: bodyId,
    name: z.string().min(1).max(500),
    mime_type: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a MIME type such as text/plain')
      .optional(),
    size_bytes: z.number().int().min(0).optional(),
    url: z.url({ protocol: /^https?$/ }).optional(),
    description: z.string().max(5000).optional(),
    access_level: accessLevel.optional().describe('link-type files only; default read'),
  })
  .strict()
  .openapi('CreateResource');

export const updateFileSchema = z
  .object({
    name: z.string().min(1).max(500).optional(),
    description: z.string().max(5000).optional(),
    status: z.literal('uploaded').optional(),
  })
  .strict()
  .openapi('UpdateFile');

export const resourceListQuery = z.object(paginationQuery(20, 100)).strict();

export const resourceResponse = z.object({ data: z.object({ resource: resourceSchema }) });
export const fileResponse = z.object({ data: z.object({ file: resourceSchema }) });
export const resourceListResponse = z.object({ data: z.object({ resources: z.array(resourceSchema) }), pagination });
export const fileListResponse = z.object({ data: z.object({ files: z.array(resourceSchema) }), pagination });

export type Resource = z.infer<typeof resourceSchema>;
export type CreateResource = z.infer<typeof createResourceSchema>;
