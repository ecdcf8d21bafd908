import { z } from 'zod';
import type { BaselinesAnswer } from '@proctor/reporter/wire';

const boxSchema = z.object({ x: z.number().int(), y: z.number().int(), width: z.number().int(), height: z.number().int() }).openapi('VisualChangeBox');

export const visualChangeSchema = z
  .object({
    id: z.number().int(),
    test_run_id: z.number().int(),
    test_id: z.string(),
    title: z.string().nullable(),
    file_path: z.string().nullable(),
    runner_project: z.string().nullable(),
    retry: z.number().int().openapi({ description: 'The attempt whose screenshot changed (the last one that did)' }),
    snapshot_name: z.string().openapi({ description: 'The snapshot name without its extension, as Playwright names the attachments: `<name>-expected.png`' }),
    expected_url: z.string().openapi({ description: 'The baseline image: a signed URL, valid for one hour from the answer' }),
    actual_url: z.string().openapi({ description: 'The new image: a signed URL, valid for one hour' }),
    diff_url: z.string().nullable().openapi({ description: "Playwright's diff image (none when the sizes differ): a signed URL, valid for one hour" }),
    comparison: z.object({
      status: z.enum(['computing', 'done', 'failed']),
      width: z.number().int().nullable(),
      height: z.number().int().nullable(),
      size_changed: z.boolean().nullable(),
      changed_pixels: z.number().int().nullable(),
      changed_ratio: z
        .number()
        .nullable()
        .openapi({ description: "Changed pixels over the baseline's pixels, 0 to 1, as Playwright counts them (pixelmatch)" }),
      boxes: z.array(boxSchema).openapi({ description: 'Bounding boxes of the changed areas, in pixels of the image, largest first (at most 20)' }),
      threshold: z.number().openapi({ description: "pixelmatch's threshold the comparison used: Playwright's default 0.2" }),
      error: z.string().nullable(),
    }),
    max_diff_pixels: z.number().int().nullable().openapi({ description: "The test's maxDiffPixels, when known (null: not reported)" }),
    max_diff_pixel_ratio: z.number().nullable().openapi({ description: "The test's maxDiffPixelRatio, when known (null: not reported)" }),
    verdict: z.enum(['change', 'flaky', 'noise']).openapi({
      description:
        "change: a real change to review. flaky: it did not reproduce (a later attempt of the test passed). noise: its diff is under the project's visual_noise_ratio, as were this screenshot's diffs in other places in recent runs. Flaky and noise changes are counted apart and cannot be approved as baselines",
    }),
    verdict_reason: z.string().nullable().openapi({ description: 'Why it is flaky or noise (null for a real change)' }),
    review: z.enum(['pending', 'approved', 'rejected']),
    reviewed_by: z.string().nullable(),
    reviewed_at: z.string().nullable(),
  })
  .openapi('VisualChange');

export const visualCountsSchema = z
  .object({
    total: z.number().int(),
    pending: z.number().int().openapi({ description: 'Real changes awaiting review (flaky and noise ones await none)' }),
    approved: z.number().int(),
    rejected: z.number().int(),
    flaky: z.number().int().openapi({ description: 'Changes that did not reproduce on a retry' }),
    noise: z.number().int().openapi({ description: "Diffs under the project's noise ratio, repeating in other places" }),
  })
  .openapi('VisualChangeCounts');

export const visualChangesSchema = z.object({ visual_changes: z.array(visualChangeSchema), counts: visualCountsSchema });

export const visualChangesResponse = z.object({ data: visualChangesSchema });

export const reviewBodySchema = z
  .object({
    review: z.enum(['approved', 'rejected']),
    ids: z.array(z.number().int().positive()).min(1).max(1000).optional().openapi({ description: "The changes to review; left out: all of the run's" }),
  })
  .strict()
  .openapi('VisualReviewBody');

export type VisualChange = z.infer<typeof visualChangeSchema>;
export type VisualChanges = z.infer<typeof visualChangesSchema>;

export const baselineCommitSchema = z
  .object({
    id: z.number().int(),
    state: z
      .enum(['queued', 'committed', 'failed', 'refused'])
      .openapi({ description: 'queued: to be made by a job; failed: tried and given up on; refused: trying again would not change it (see error)' }),
    branch: z.string().nullable(),
    via: z
      .enum(['github', 'gitlab', 'git'])
      .nullable()
      .openapi({ description: "GitHub's git data API, GitLab's commits API, or a push to the project's repository" }),
    commit_sha: z.string().nullable(),
    commit_url: z.string().nullable().openapi({ description: 'The commit on GitHub or GitLab (null for a push)' }),
    files: z.array(z.object({ change_id: z.number().int(), path: z.string() })),
    error: z.string().nullable(),
    attempts: z.number().int(),
    queued_at: z.string(),
    finished_at: z.string().nullable(),
    rerun: z
      .object({ run_id: z.number().int(), run_number: z.number().int() })
      .nullable()
      .openapi({ description: "The rerun of the changed tests Proctor triggered on the new commit (a push to the project's repository only)" }),
    proof: z
      .object({
        run_id: z.number().int(),
        run_number: z.number().int(),
        state: z.enum(['awaiting', 'ended', 'passed', 'failing', 'not_run']).openapi({
          description:
            'awaiting: the run is under way; ended: its proof is being recorded; passed: every approved test passed there; failing: one still failed; not_run: none of them ran',
        }),
        summary: z.string().openapi({ description: '"proved by run #N", "still failing in run #N", …' }),
      })
      .nullable()
      .openapi({
        description:
          "The first later run of the reviewed run's environment and branch on the baseline commit, and whether the approved tests passed there (null: none yet)",
      }),
  })
  .openapi('BaselineCommit');

export const baselineFileSchema = z
  .object({
    change_id: z.number().int(),
    snapshot_name: z.string(),
    runner_project: z.string().nullable(),
    path: z
      .string()
      .nullable()
      .openapi({ description: "Where Playwright looks for the baseline, relative to the repository's root (null: not known, see reason)" }),
    reason: z.string().nullable(),
    image_url: z.string().openapi({ description: 'The approved image: a signed URL, valid for one hour' }),
    committed_in: z.number().int().nullable().openapi({ description: 'The baseline commit that wrote it' }),
  })
  .openapi('BaselineFile');

export const baselinesResponse = z.object({
  data: z.object({
    files: z.array(baselineFileSchema).openapi({ description: "The run's approved images and their paths in the repository" }),
    commits: z.array(baselineCommitSchema).openapi({ description: 'Commits of the approved images, the newest first' }),
  }),
});

export type BaselineCommit = z.infer<typeof baselineCommitSchema>;
export type Baselines = z.infer<typeof baselinesResponse>['data'];

/** What `proctor-ci snapshots pull` reads of the answer (reporter/src/api/wire.ts): a change it would misread fails the type check. */
type Reads<Answer, Wire> = [Answer] extends [Wire] ? true : false;
const wireAgrees: Reads<z.output<typeof baselinesResponse>, BaselinesAnswer> = true;
void wireAgrees;
