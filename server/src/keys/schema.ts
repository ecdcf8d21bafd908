import { z } from 'zod';
import { KEY_SCOPES } from '../principals.ts';
import '../http/openapi.ts';

export const keySchema = z
  .object({
    id: z.string().describe("the key's public part: prc_p_<id>_…"),
    name: z.string().nullable().describe('what the key is for, as its maker named it; null when it was given no name'),
    kind: z.enum(['project', 'user']),
    scope: z.enum(KEY_SCOPES),
    test_run_id: z.number().int().nullable().describe("set on a run's own key and its agents' tokens, which go when the run ends"),
    test_run_number: z.number().int().nullable().describe("that run's number in the project (#1 its first run)"),
    created_by: z
      .object({ id: z.string(), name: z.string() })
      .nullable()
      .describe('the person who made it; null for one made on the command line or by the server'),
    created_at: z.iso.datetime(),
    last_used_at: z.iso.datetime().nullable().describe('within a minute'),
  })
  .openapi('ApiKey');

export const createKeySchema = z
  .object({
    scope: z.enum(KEY_SCOPES).describe('read: what a viewer does; report: what a member does (runs, results, snoozes, triage); admin: everything'),
    name: z.string().trim().min(1, 'must not be blank').max(100).optional().describe('what the key is for ("CI on main"), shown in lists of keys; trimmed'),
  })
  .strict()
  .openapi('CreateApiKey');

export const keyParams = z.object({ id: z.string().regex(/^[0-9a-f]{12}$/, "must be a key's 12-character id") }).strict();

export const keyListResponse = z.object({ data: z.object({ keys: z.array(keySchema) }) });
export const createdKeyResponse = z.object({
  data: z.object({ key: keySchema.extend({ key: z.string().describe('the whole key: shown this once, stored only as a hash') }) }),
});
export const successResponse = z.object({ data: z.object({ success: z.boolean() }) });
