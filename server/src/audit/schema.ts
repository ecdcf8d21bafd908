import { z } from 'zod';
import { pagination } from '../http/openapi.ts';
import { paginationQuery } from '../http/pagination.ts';

export const auditEventSchema = z
  .object({
    id: z.number().int(),
    at: z.string(),
    actor: z
      .object({ kind: z.enum(['user', 'key', 'system', 'cli']), id: z.string().nullable(), name: z.string() })
      .describe("`cli`: a `proctor` command on the server's machine, its id the operating system's user; `system`: the server itself (id null)"),
    action: z.string().describe('`<object>.<verb>`, as `member.role_changed`, `key.created`, `run.unpinned`'),
    target: z.string().describe('`<kind>:<id>`, as `user:…`, `key:…`, `environment:3`'),
    before: z.unknown().nullable().describe('the object before the change, as the API shows it (never a secret); null for a creation'),
    after: z.unknown().nullable().describe('the object after the change; null for a removal'),
  })
  .openapi('AuditEvent');

export const auditQuerySchema = z
  .object({
    ...paginationQuery(50, 200),
    action: z.string().min(1).max(100).optional().describe('an action, or its object alone (`member` for every `member.…`)'),
    actor: z.string().min(1).max(200).optional().describe("the actor's id: a user's id or a key's"),
    since: z.iso.datetime({ offset: true }).optional(),
    until: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();

export const auditListResponse = z.object({ data: z.object({ events: z.array(auditEventSchema) }), pagination });

export type AuditEvent = z.infer<typeof auditEventSchema>;
export type AuditQuery = z.infer<typeof auditQuerySchema>;
