import { z } from 'zod';
import { bodyId, positiveId, runnerTestId } from '../http/fields.ts';
import { pagination } from '../http/openapi.ts';
import { paginationQuery } from '../http/pagination.ts';

export const SUBJECT_KINDS = ['failure_group', 'test'] as const;
export const ACTION_KINDS = ['create', 'refresh', 'failing', 'passing'] as const;

export const TRACKERS = ['github', 'gitlab', 'jira', 'linear'] as const;

const jiraShown = z
  .object({
    url: z.string().describe("the Jira site's base URL: https://SITE.atlassian.net for Cloud, the Data Center's base URL"),
    project_key: z.string().describe('the Jira project whose issues Proctor files (its key, e.g. OPS)'),
    issue_type: z.string().describe('the issue type Proctor creates (its name, e.g. Bug)'),
    email: z.string().nullable().describe("Cloud: the Atlassian account's email the API token belongs to; null: a Data Center personal access token"),
    has_token: z.boolean().describe('the write-only API token (or personal access token) is set'),
  })
  .describe('Jira Cloud or Data Center; null for the other trackers');
const linearShown = z
  .object({
    team_id: z.string().describe('the Linear team whose issues Proctor files (its id)'),
    has_api_key: z.boolean().describe('the write-only API key is set'),
  })
  .describe('Linear; null for the other trackers');

export const trackerSettingsSchema = z
  .object({
    tracker: z.enum(TRACKERS).describe('where the issues are filed'),
    destination_id: z
      .number()
      .int()
      .nullable()
      .describe(
        "GitHub or GitLab: the notification destination whose repository (or project) gets the issues, acting with that destination's write-only token (or the server's App or token where the repository is bound); null for Jira and Linear",
      ),
    jira: jiraShown.nullable(),
    linear: linearShown.nullable(),
    default_branch: z.string().describe('the branch whose runs create issues by rule and move linked issues'),
    create_for_new_groups: z.boolean().describe('a failure group first seen in a run of the default branch gets an issue'),
    create_for_flaky_tests: z
      .boolean()
      .describe('a test of a default-branch run that is flaky there and whose class over the flakiness window turned `flaky` gets an issue'),
    create_for_broken_tests: z
      .boolean()
      .describe(
        'a test that failed the last `broken_after_failures` default-branch runs of an environment in a row (neither passed nor flaky between) gets an issue, at the run that makes the streak that long',
      ),
    broken_after_failures: z.number().int().describe('how many default-branch runs in a row a test fails before it counts as broken'),
    when_closed_failing: z
      .enum(['reopen', 'comment'])
      .describe('a linked issue closed while its test still fails on the default branch: reopened, or commented on once per closing'),
    passes_to_resolve: z.number().int().describe('after this many default-branch runs in a row where it passed, the linked issue is commented on'),
    close_when_resolved: z.boolean().describe('and closed then'),
    updated_at: z.string(),
  })
  .openapi('TrackerSettings');

const secret = (what: string) => z.string().min(1).max(2000).describe(`${what}; write-only: answers say only whether it is set`);

// The settings as answered may be sent back with a change: `tracker`, `has_token` and `has_api_key`
// are taken and must agree; a null `jira` or `linear` is one not given.
export const putTrackerSettingsSchema = z
  .object({
    tracker: z.enum(TRACKERS).optional().describe('as answered; when given, it must be the tracker the body names'),
    destination_id: bodyId.nullable().optional().describe('GitHub or GitLab: the notification destination whose repository gets the issues'),
    jira: z
      .object({
        url: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).max(2000),
        project_key: z
          .string()
          .regex(/^[A-Z][A-Z0-9_]{0,99}$/, 'a Jira project key: capital letters, digits and _')
          .describe('the project whose issues Proctor files'),
        issue_type: z.string().trim().min(1).max(255).default('Bug').describe('the issue type Proctor creates, by name'),
        email: z
          .email()
          .max(320)
          .optional()
          .describe(
            "Cloud: the Atlassian account's email (Basic authentication with the API token); left out: the token is a Data Center personal access token (Bearer)",
          ),
        api_token: secret('the API token (Cloud) or personal access token (Data Center); left out: the one stored is kept').optional(),
        has_token: z.boolean().optional().describe('as answered; ignored'),
      })
      .strict()
      .nullable()
      .optional()
      .describe(
        'Jira Cloud or Data Center, reached through REST API v2 under the outbound rules of receivers (a private address only where the operator allows it)',
      ),
    linear: z
      .object({
        team_id: z.string().trim().min(1).max(100).describe('the team whose issues Proctor files, by its id'),
        api_key: secret('a Linear API key; left out: the one stored is kept').optional(),
        has_api_key: z.boolean().optional().describe('as answered; ignored'),
      })
      .strict()
      .nullable()
      .optional()
      .describe("Linear, reached at its GraphQL API (the server's PROCTOR_LINEAR_API_URL) under the outbound rules of receivers"),
    default_branch: z.string().trim().min(1).max(255).default('main'),
    create_for_new_groups: z.boolean().default(false),
    create_for_flaky_tests: z.boolean().default(false),
    create_for_broken_tests: z.boolean().default(false),
    broken_after_failures: z.number().int().min(2).max(100).default(3),
    when_closed_failing: z.enum(['reopen', 'comment']).default('reopen'),
    passes_to_resolve: z.number().int().min(1).max(1000).default(5),
    close_when_resolved: z.boolean().default(false),
  })
  .strict()
  .refine((body) => [body.destination_id, body.jira, body.linear].filter((given) => given !== undefined && given !== null).length === 1, {
    message: 'give one of destination_id (GitHub, GitLab), jira and linear',
    path: ['destination_id'],
  })
  .refine(
    (body) =>
      body.tracker === undefined ||
      (body.jira ? body.tracker === 'jira' : body.linear ? body.tracker === 'linear' : body.tracker === 'github' || body.tracker === 'gitlab'),
    { message: 'the tracker the body names (destination_id: github or gitlab; jira; linear) is another', path: ['tracker'] },
  )
  .openapi('PutTrackerSettings');

export const trackerLinkSchema = z
  .object({
    id: z.number().int(),
    subject_kind: z.enum(SUBJECT_KINDS),
    subject_id: z.string().describe("the failure group's id, or the test's 41-character runner id"),
    tracker: z.enum(TRACKERS),
    origin: z.enum(['created', 'linked', 'rule']).describe('created from Proctor, linked to an existing issue, or created by a rule of the tracker settings'),
    issue_key: z
      .string()
      .nullable()
      .describe("the tracker's name for the issue (GitHub's number, GitLab's iid, Jira's key, Linear's identifier); null while it is being created"),
    issue_url: z.string().nullable(),
    issue_state: z.enum(['open', 'closed']).nullable().describe('as Proctor last read or left it; null before the first read'),
    state_read_at: z.string().nullable(),
    passes: z.number().int().describe('default-branch runs in a row where the subject passed, since it last failed'),
    last_action: z
      .object({
        kind: z.enum(ACTION_KINDS),
        state: z.enum(['pending', 'delivered', 'failed']),
        attempts: z.number().int(),
        last_error: z.string().nullable(),
      })
      .nullable()
      .describe("the latest of the link's actions on the tracker (its outbox), with the tracker's answer when it failed"),
    created_by: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('TrackerLink');

export const createLinkSchema = z
  .object({
    failure_group_id: z.string().min(1).max(200).optional(),
    test_case_id: runnerTestId.optional(),
    issue: z
      .string()
      .trim()
      .min(1)
      .max(2000)
      .optional()
      .describe("an existing issue of the settings' repository, by its URL or number (`#12`, `12`); left out: Proctor creates one"),
  })
  .strict()
  .refine((body) => (body.failure_group_id === undefined) !== (body.test_case_id === undefined), {
    message: 'give failure_group_id or test_case_id, not both',
    path: ['failure_group_id'],
  })
  .openapi('NewTrackerLink');

export const linkListQuery = z
  .object({ ...paginationQuery(20, 100), failure_group_id: z.string().min(1).max(200).optional(), test_case_id: runnerTestId.optional() })
  .strict();
export const linkParams = z.object({ id: positiveId }).strict();

export const settingsResponse = z.object({ data: z.object({ tracker_settings: trackerSettingsSchema.nullable() }) });
export const linkResponse = z.object({ data: z.object({ tracker_link: trackerLinkSchema }) });
export const linkListResponse = z.object({ data: z.object({ tracker_links: z.array(trackerLinkSchema) }), pagination });
export const deletedResponse = z.object({ data: z.object({ success: z.boolean() }) });

export type TrackerSettings = z.infer<typeof trackerSettingsSchema>;
export type PutTrackerSettings = z.infer<typeof putTrackerSettingsSchema>;
export type TrackerLink = z.infer<typeof trackerLinkSchema>;
export type ActionKind = (typeof ACTION_KINDS)[number];
export type SubjectKind = (typeof SUBJECT_KINDS)[number];
