import { z } from 'zod';
import { KEY_SCOPES } from '../http/access.ts';
import '../http/openapi.ts';

export const keySchema = z
  .object({
    id: z.string().describe("the key's public part: prc_p_<id>_…"),
    kind: z.enum(['project', 'user']),
    scope: z.enum(KEY_SCOPES),
    test_run_id: z.number().int().nullable().describe("set on a run's own reporter key, which goes when the run ends"),
    created_at: z.iso.datetime(),
  })
  .openapi('ApiKey');

export const createKeySchema = z
  .object({ scope: z.enum(KEY_SCOPES).describe('read: GET only; report: read, create runs, send results; admin: everything') })
  .strict()
  .openapi('CreateApiKey');

export const keyParams = z.object({ id: z.string().regex(/^[0-9a-f]{12}$/, "must be a key's 12-character id") }).strict();
export const memberParams = z.object({ user_id: z.string().min(1).max(200) }).strict();

export const keyListResponse = z.object({ data: z.object({ keys: z.array(keySchema) }) });
export const createdKeyResponse = z.object({
  data: z.object({ key: keySchema.extend({ key: z.string().describe('the whole key: shown this once, stored only as a hash') }) }),
});
export const successResponse = z.object({ data: z.object({ success: z.boolean() }) });
