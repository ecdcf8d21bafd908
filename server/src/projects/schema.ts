import { z } from 'zod';
import '../http/openapi.ts';
import type { Project } from './store.ts';

const repoUrl = z.string().min(1).max(2000);
const repoName = z.string().min(1).max(200);

export const projectSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    repo_url: z
      .string()
      .nullable()
      .describe('the test repository triggered runs check out: a git URL, or a folder on the server; null for a project that only receives reports'),
    repo_name: z.string().describe('owner/name; empty when the project has no repository'),
    create_environments_on_first_use: z
      .boolean()
      .describe('a report, a JUnit upload or an agent naming an environment the project lacks makes it (its slug as its name); false: it is refused'),
    baselines_to_default_branch: z
      .boolean()
      .describe("approved screenshot baselines may be committed to the repository's default branch; false: only to other branches"),
    visual_noise_ratio: z
      .number()
      .nullable()
      .describe(
        'a visual change whose share of changed pixels is at most this (0 to 1), with small diffs of the same screenshot in other places in recent runs, is noise: not offered as a baseline; null: off',
      ),
    visual_noise_runs: z.number().int().describe("the environment's recent runs holding the test (the run itself included) the noise rule looks at"),
    created_at: z.string(),
  })
  .openapi('Project');

export const newProjectSchema = z
  .object({
    name: z.string().min(1).max(200),
    repo_url: repoUrl
      .nullable()
      .optional()
      .describe(
        'the test repository: a git URL, or a folder on the server; leave it out for a project that only receives reports (set it later to trigger runs)',
      ),
    repo_name: repoName.optional().describe('owner/name; by default from repo_url'),
  })
  .strict()
  .openapi('NewProject');

export const projectUpdateSchema = z
  .object({
    name: z.string().min(1).max(200).optional(),
    repo_url: repoUrl.nullable().optional().describe('the test repository triggered runs check out; null: none (the project only receives reports)'),
    repo_name: repoName.optional().describe('owner/name; by default from repo_url'),
    create_environments_on_first_use: z.boolean().optional(),
    baselines_to_default_branch: z.boolean().optional().describe("approved screenshot baselines may be committed to the repository's default branch"),
    visual_noise_ratio: z
      .number()
      .min(0)
      .lt(1)
      .nullable()
      .optional()
      .describe('share of changed pixels (0 to 1) at or under which a screenshot diff repeating in other places in recent runs is noise; null: off'),
    visual_noise_runs: z.number().int().min(2).max(50).optional().describe('recent runs the noise rule looks at (2 to 50)'),
  })
  .strict()
  .openapi('ProjectUpdate');

export const projectResponse = z.object({ data: z.object({ project: projectSchema }) });

export type NewProject = z.infer<typeof newProjectSchema>;
export type ProjectUpdateBody = z.infer<typeof projectUpdateSchema>;

export function presentProject(project: Project): z.infer<typeof projectSchema> {
  return { ...project, created_at: project.created_at.toISOString() };
}
