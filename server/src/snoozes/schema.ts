import { z } from 'zod';
import { bodyId, positiveId, runnerTestId, timestamp } from '../http/fields.ts';
import { pagination } from '../http/openapi.ts';
import { paginationQuery } from '../http/pagination.ts';

const testIds = z.array(runnerTestId).min(1).max(10_000);

export const snoozeSchema = z
  .object({
    id: z.number().int(),
    test_ids: z.array(z.string()),
    snooze_until: z.string(),
    description: z.string().nullable(),
    created_from_test_run_id: z.number().int().nullable(),
    created_by: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    scoped_to_environment_id: z.number().int().nullable(),
    source: z
      .enum(['user', 'auto'])
      .openapi({ description: "'auto': a quarantine made by the project's quarantine policy; 'user': made by a person or a key" }),
  })
  .openapi('Snooze');

export type SnoozeSource = z.infer<typeof snoozeSchema>['source'];

export const createSnoozeSchema = z
  .object({
    test_ids: testIds,
    snooze_until: timestamp,
    description: z.string().max(5000).optional(),
    // Accepted for compatibility; the server sets it from the key, whatever the body says.
    created_by: z.string().optional(),
    scoped_to_environment_id: bodyId.optional(),
    created_from_test_run_id: z
      .union([z.number(), z.string().regex(/^\d+$/, 'must be a test run id')])
      .transform(Number)
      .pipe(bodyId)
      .optional(),
  })
  .strict()
  .openapi('CreateSnooze');

export const updateSnoozeSchema = z
  .object({
    snooze_until: timestamp.optional(),
    description: z.string().max(5000).nullable().optional(),
    expire_now: z.boolean().optional(),
    scoped_to_environment_id: bodyId.nullable().optional(),
    test_ids: testIds.optional(),
  })
  .strict()
  .openapi('UpdateSnooze');

export const addTestIdsSchema = z.object({ test_ids: testIds }).strict().openapi('AddSnoozeTestIds');

export const snoozeListQuery = z
  .object({
    ...paginationQuery(20, 100),
    environment_id: positiveId.optional(),
    environment: z.string().min(1).max(200).optional().openapi({ description: "An environment's slug, instead of environment_id" }),
    status: z.enum(['active', 'expired', 'all']).default('active'),
  })
  .strict();

export const snoozeResponse = z.object({ data: z.object({ snooze: snoozeSchema }) });
export const snoozeListResponse = z.object({ data: z.object({ snoozes: z.array(snoozeSchema) }), pagination });

export type CreateSnooze = z.infer<typeof createSnoozeSchema>;
export type UpdateSnooze = z.infer<typeof updateSnoozeSchema>;
export type SnoozeStatus = z.infer<typeof snoozeListQuery>['status'];
