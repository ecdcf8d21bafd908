import { BADGE_STYLES } from '@proctor/badge/spec';
import { z } from 'zod';
import { positiveId } from '../http/fields.ts';

const colour = z
  .string()
  .regex(
    /^(#?[0-9a-fA-F]{3}|#?[0-9a-fA-F]{6}|brightgreen|green|yellowgreen|yellow|orange|red|blue|lightgrey|grey|gray|success|important|critical|informational|inactive|blueviolet|ff69b4)$/,
    'must be a hex colour or a shields.io colour name',
  );

export const badgeParams = z
  .object({
    project_id: positiveId,
    file: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*\.(svg|png|json)$/, 'must be <environment_slug>.svg, .png or .json'),
  })
  .strict();

export const badgeQuery = z
  .object({
    label: z.string().min(1).max(100).optional().describe("default: the environment's name"),
    style: z.enum(BADGE_STYLES).default('flat'),
    metric: z.enum(['status', 'tests', 'pass-rate']).default('status').describe('pass-rate: passed runs of the last 7 days'),
    color: colour.optional(),
    labelColor: colour.optional(),
    scale: z.enum(['1', '2']).default('1').describe('PNG only'),
  })
  .strict();

export const endpointBadgeSchema = z
  .object({ schemaVersion: z.literal(1), label: z.string(), message: z.string(), color: z.string() })
  .openapi('EndpointBadge');

export type BadgeQuery = z.infer<typeof badgeQuery>;
