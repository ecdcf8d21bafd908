import { z } from 'zod';
import { DIGEST_PERIODS } from '../digests/index.ts';
import { pagination } from '../http/openapi.ts';
import { MAX_INT4 } from '../http/fields.ts';
import { paginationQuery } from '../http/pagination.ts';

// Digest subscriptions (a digest sent on a schedule) and owners' routing rules: what the API takes and answers.

/** Destination types a digest or an owner's failures may be sent to: people read them. */
export const READ_BY_PEOPLE = ['slack', 'teams', 'email'] as const;

/** An IANA time zone this Node knows (its ICU data), as Intl names it. */
const timeZone = z
  .string()
  .min(1)
  .max(64)
  .refine((zone) => {
    try {
      new Intl.DateTimeFormat('en', { timeZone: zone });
      return true;
    } catch {
      return false;
    }
  }, 'must be an IANA time zone, such as UTC or Europe/Paris')
  .describe('the IANA time zone of `hour` and `weekday`; default UTC');

const id = z.number().int().min(1).max(MAX_INT4);
const hour = z.number().int().min(0).max(23).describe('the hour of the day it is sent, 0-23, in `time_zone`');
const weekday = z.number().int().min(1).max(7).describe('a weekly digest: the ISO weekday it is sent (1 Monday … 7 Sunday); null for a daily one');

export const subscriptionSchema = z
  .object({
    id: z.number().int(),
    environment_id: z.number().int(),
    destination_id: z.number().int(),
    period: z.enum(DIGEST_PERIODS),
    hour: z.number().int(),
    weekday: z.number().int().nullable(),
    time_zone: z.string(),
    next_due_at: z.string().describe('when it is sent next'),
    last_delivery: z
      .object({
        due_at: z.string(),
        state: z.enum(['pending', 'delivered', 'failed']),
        attempts: z.number().int(),
        last_error: z.string().nullable(),
      })
      .nullable()
      .describe('its latest digest in the outbox; null before the first'),
    created_at: z.string(),
  })
  .openapi('DigestSubscription');

export const createSubscriptionSchema = z
  .object({
    environment_id: id,
    destination_id: id.describe('a slack, teams or email destination of the project'),
    period: z.enum(DIGEST_PERIODS),
    hour: hour.default(8),
    weekday: weekday.optional().describe('required for a weekly digest; absent for a daily one'),
    time_zone: timeZone.default('UTC'),
  })
  .strict()
  .openapi('NewDigestSubscription');

export const updateSubscriptionSchema = z
  .object({ hour: hour.optional(), weekday: weekday.optional(), time_zone: timeZone.optional() })
  .strict()
  .openapi('DigestSubscriptionUpdate');

export const subscriptionListQuery = z.object({ ...paginationQuery(20, 100) }).strict();
export const subscriptionResponse = z.object({ data: z.object({ subscription: subscriptionSchema }) });
export const subscriptionListResponse = z.object({ data: z.object({ subscriptions: z.array(subscriptionSchema) }), pagination });

/** An owner as CODEOWNERS or an `owner` annotation names it, or a glob of such names (`*` any characters). */
const ownerPattern = z
  .string()
  .min(1)
  .max(200)
  .regex(/^\S+$/, 'must be one owner or glob, without spaces')
  .describe(
    'an owner (`@user`, `@org/team`, an e-mail address, an annotation value), exactly, or a glob where `*` stands for any characters; case-insensitive',
  );

export const ownerRouteSchema = z
  .object({ id: z.number().int(), owner: z.string(), destination_id: z.number().int(), created_at: z.string() })
  .openapi('OwnerRoute');

export const createOwnerRouteSchema = z
  .object({ owner: ownerPattern, destination_id: id.describe('a slack, teams or email destination of the project') })
  .strict()
  .openapi('NewOwnerRoute');

export const ownerRouteListQuery = z.object({ ...paginationQuery(50, 200) }).strict();
export const ownerRouteResponse = z.object({ data: z.object({ route: ownerRouteSchema }) });
export const ownerRouteListResponse = z.object({ data: z.object({ routes: z.array(ownerRouteSchema) }), pagination });

export type Subscription = z.infer<typeof subscriptionSchema>;
export type NewSubscription = z.infer<typeof createSubscriptionSchema>;
export type SubscriptionUpdate = z.infer<typeof updateSubscriptionSchema>;
export type OwnerRoute = z.infer<typeof ownerRouteSchema>;
