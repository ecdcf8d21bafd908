import { z } from 'zod';
import '../http/openapi.ts';
import { positiveId } from '../http/fields.ts';

// The repositories an instance admin bound to a project, where the server's own credentials (its
// GitHub App, its GitLab token) may act for the project's notifications.

export const BINDING_HOSTS = ['github', 'gitlab'] as const;
export type BindingHost = (typeof BINDING_HOSTS)[number];

/** A GitHub repository as a destination and a binding name it. */
export const githubRepository = z
  .string()
  .max(200)
  .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'must be a GitHub repository, owner/name');

/** A GitLab project as a destination and a binding name it: its path (subgroups too) or its id. */
export const gitlabProject = z
  .string()
  .max(500)
  .regex(/^([1-9]\d{0,9}|[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)+)$/, "must be a GitLab project's path (group/name, subgroups too) or its id");

export const bindingSchema = z
  .object({
    id: z.number().int(),
    host: z.enum(BINDING_HOSTS),
    name: z.string().describe("owner/name on GitHub; a GitLab project's path or id, as a destination names it"),
    created_by: z.string().nullable().describe("the binding person's name; null for the command line or a setup"),
    created_at: z.string(),
  })
  .openapi('RepositoryBinding');

export const newBindingSchema = z
  .object({
    host: z.enum(BINDING_HOSTS).describe("github: the server's GitHub App may act there; gitlab: the server's GitLab token (PROCTOR_GITLAB_TOKEN) may"),
    name: z.string().max(500).describe("owner/name on GitHub; a GitLab project's path (group/name) or id"),
  })
  .strict()
  .superRefine((value, context) => {
    const checked = (value.host === 'github' ? githubRepository : gitlabProject).safeParse(value.name);
    if (!checked.success) context.addIssue({ code: 'custom', path: ['name'], message: checked.error.issues[0]?.message ?? 'is not a repository' });
  })
  .openapi('NewRepositoryBinding');

export const projectBindingParams = z.object({ id: positiveId }).strict();
export const bindingParams = z.object({ id: positiveId, binding_id: positiveId }).strict();

export const bindingResponse = z.object({ data: z.object({ binding: bindingSchema }) });
export const bindingListResponse = z.object({ data: z.object({ bindings: z.array(bindingSchema) }) });

export type Binding = z.infer<typeof bindingSchema>;
export type NewBinding = z.infer<typeof newBindingSchema>;
