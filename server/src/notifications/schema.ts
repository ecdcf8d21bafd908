import { z } from 'zod';
import { githubRepository as repo, gitlabProject } from '../bindings/schema.ts';
import { pagination } from '../http/openapi.ts';
import { positiveId } from '../http/fields.ts';
import { paginationQuery } from '../http/pagination.ts';

export const DESTINATION_TYPES = ['slack', 'webhook', 'github', 'gitlab', 'email', 'teams'] as const;
export const NOTIFY_WHEN = ['always', 'failed', 'changed', 'never'] as const;
export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;

const receiverUrl = z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).max(2000);
const environmentSlug = z.string().min(1).max(100);
const recipients = z
  .array(z.email().max(320))
  .min(1)
  .max(50)
  .describe("the addresses an email destination mails (sent through the server's PROCTOR_SMTP_URL), 1 to 50");
/** A Slack conversation id: a channel (C…), a private channel (G…) or a person (U…, W…: the app's direct message with them). */
const slackChannel = z
  .string()
  .regex(/^[CGUW][A-Z0-9]{6,20}$/, { error: 'must be a Slack channel id (C…, G…) or user id (U…, W…), as Slack shows it, not a name' })
  .describe(
    "for a Slack destination by bot token: the conversation chat.postMessage posts to, a channel id (C…, G…; the app must be in it) or a user id (U…, W…: the app's direct message with that person)",
  );
const writeOnly = (what: string) => z.string().min(1).max(500).describe(`${what}; write-only: answers say only has_secret`);

export const destinationSchema = z
  .object({
    id: z.number().int(),
    type: z.enum(DESTINATION_TYPES),
    url: z
      .string()
      .nullable()
      .describe(
        "the Slack incoming webhook, the Microsoft Teams Workflows webhook or the webhook receiver, shown with its scheme and host only (the rest may carry a credential, such as a Teams URL's `sig`), unless the destination's type says which part is public: Slack's own hooks show `/services/T…/B…/••••`; null for GitHub, GitLab and email",
      ),
    repo: z.string().nullable().describe('owner/name, for GitHub; null otherwise'),
    project: z.string().nullable().describe("the project's path (group/name) or id, for GitLab; null otherwise"),
    recipients: z.array(z.string()).nullable().describe('the addresses an email destination mails; null for other types'),
    channel: z.string().nullable().describe('the channel or user id a Slack destination by bot token posts to; null for other destinations'),
    environments: z.array(z.string()).describe('environment slugs whose runs are told; empty: every environment'),
    when: z
      .enum(NOTIFY_WHEN)
      .describe(
        "always: every end; failed: failed or error only; changed: the state differs from the previous run's of the same environment and branch; never: no run's end (only digests and owners' failures routed here)",
      ),
    has_secret: z.boolean().describe('a webhook secret, a GitHub, GitLab or Slack bot token or a credential in the URL is set'),
    created_at: z.string(),
  })
  .openapi('NotificationDestination');

export const createDestinationSchema = z
  .object({
    type: z.enum(DESTINATION_TYPES),
    url: receiverUrl.optional(),
    repo: repo.optional(),
    project: gitlabProject.optional(),
    recipients: recipients.optional(),
    channel: slackChannel.optional(),
    environments: z.array(environmentSlug).max(100).default([]),
    when: z.enum(NOTIFY_WHEN).default('always'),
    secret: writeOnly("the webhook's HMAC-SHA256 key: each event carries X-Proctor-Signature-256: sha256=<hex of the body's HMAC>").optional(),
    token: writeOnly(
      "a GitHub token with commit status and pull request write access; a GitLab token with the api scope (a project, group or personal access token); a Slack app's bot token (xoxb-…, the chat:write scope) with `channel`. Left out: the server's GitHub App or GitLab token, on a repository an instance admin bound to the project only",
    ).optional(),
  })
  .strict()
  .openapi('NewNotificationDestination');

export const updateDestinationSchema = z
  .object({
    url: receiverUrl.optional(),
    repo: repo.optional(),
    project: gitlabProject.optional(),
    recipients: recipients.optional(),
    channel: slackChannel.optional(),
    environments: z.array(environmentSlug).max(100).optional(),
    when: z.enum(NOTIFY_WHEN).optional(),
    secret: writeOnly('a new webhook secret').nullable().optional().describe('null removes it'),
    token: writeOnly('a new GitHub, GitLab or Slack bot token').optional(),
  })
  .strict()
  .openapi('NotificationDestinationUpdate');

export const destinationListQuery = z.object({ ...paginationQuery(20, 100) }).strict();
export const destinationResponse = z.object({ data: z.object({ destination: destinationSchema }) });
export const destinationListResponse = z.object({ data: z.object({ destinations: z.array(destinationSchema) }), pagination });

export const deliverySchema = z
  .object({
    id: z.number().int(),
    destination_id: z.number().int(),
    test_run_id: z.number().int(),
    kind: z.enum(['run', 'owners']).describe("run: the run's ending; owners: the run's failures an owner's routing rule sent to this destination"),
    event_id: z.string().describe('the same at every attempt: a receiver drops a repeat by it'),
    state: z.enum(DELIVERY_STATES),
    attempts: z.number().int(),
    last_error: z.string().nullable(),
  })
  .openapi('NotificationDelivery');

export const deliveryListQuery = z.object({ ...paginationQuery(20, 100), test_run_id: positiveId }).strict();
export const deliveryListResponse = z.object({ data: z.object({ deliveries: z.array(deliverySchema) }), pagination });

export type Destination = z.infer<typeof destinationSchema>;
export type NewDestination = z.infer<typeof createDestinationSchema>;
export type DestinationUpdate = z.infer<typeof updateDestinationSchema>;
export type Delivery = z.infer<typeof deliverySchema>;
