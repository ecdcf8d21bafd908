import { z } from 'zod';
import '../http/openapi.ts';
import { testRunSchema } from '../runs/schema.ts';

/** A century: the longest a policy keeps anything for. */
const MAX_DAYS = 36_500;

export const retentionPolicySchema = z
  .object({
    results_days: z
      .number()
      .int()
      .min(1)
      .max(MAX_DAYS)
      .openapi({ description: 'Days a run keeps its results (flattenedSummaryDetails) after it ended; then only its counts and the daily rollups stay' }),
    artifacts_days: z
      .number()
      .int()
      .min(1)
      .max(MAX_DAYS)
      .openapi({ description: 'Days a run keeps its attachments (screenshots, videos, traces) after it ended; never more than results_days' }),
  })
  .openapi('RetentionPolicy');

export const retentionPolicyUpdateSchema = retentionPolicySchema.partial().strict().openapi('RetentionPolicyUpdate');

export const retentionPolicyResponse = z.object({ data: z.object({ policy: retentionPolicySchema }) });

export const pinResponse = z.object({ data: z.object({ test_run: testRunSchema }) });

export type RetentionPolicy = z.infer<typeof retentionPolicySchema>;
