import type { AppDeps } from '../context.ts';
import { audited } from '../audit/index.ts';
import { notFound } from '../http/errors.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { repoNameFor } from './repo-name.ts';
import { presentProject, projectResponse, projectUpdateSchema } from './schema.ts';
import { getProject, updateProject } from './store.ts';

// The project of the request itself: its test repository (which a project that only receives
// reports goes without until it is to trigger runs) and its settings.

export function projectSettingRoutes(ctx: RouteContext, deps: Pick<AppDeps, 'sql' | 'clock'>): void {
  const { sql, clock } = deps;

  addRoute(ctx, {
    method: 'get',
    path: '/api/project',
    tag: 'Projects',
    summary: 'The project of the request: its test repository and its settings',
    response: projectResponse,
    handler: async ({ scope }) => {
      const project = await getProject(sql, scope.projectId);
      if (!project) throw notFound('project');
      return { data: { project: presentProject(project) } };
    },
  });

  addRoute(ctx, {
    method: 'patch',
    path: '/api/project',
    tag: 'Projects',
    summary:
      'Change the project of the request: its name, its test repository (set one to trigger runs; null for a project that only receives reports) and whether environments are made on first use',
    body: projectUpdateSchema,
    response: projectResponse,
    handler: async ({ body, scope }) => {
      const project = await audited(sql, scope, clock(), async (tx) => {
        const before = await getProject(tx, scope.projectId);
        if (!before) throw notFound('project');
        const repoName = body.repo_url !== undefined ? repoNameFor(body.repo_url, body.repo_name) : body.repo_name;
        const after = await updateProject(tx, scope.projectId, { ...body, repo_name: repoName });
        if (!after) throw notFound('project');
        return [after, { action: 'project.updated', target: `project:${after.id}`, before: presentProject(before), after: presentProject(after) }];
      });
      return { data: { project: presentProject(project) } };
    },
  });
}
