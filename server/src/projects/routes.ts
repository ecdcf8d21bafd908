import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import type { Person } from '../http/access.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { newProjectSchema, presentProject, projectResponse, projectSchema, projectUpdateSchema } from './schema.ts';
import { changeProject, makeProject, projectOfScope, projectsOf, requireProjectMaker } from './service.ts';

const TAG = 'Projects';

/** Projects themselves (/api/projects): an instance admin makes them and sees every one; anyone else sees the projects they belong to. */
export function projectRoutes(ctx: RouteContext, deps: Pick<AppDeps, 'sql' | 'clock' | 'config'>): void {
  const { sql, clock, config } = deps;

  addRoute(ctx, {
    method: 'get',
    path: '/api/projects',
    tag: TAG,
    summary: "The projects a person belongs to; an instance admin's: every project",
    person: 'person',
    response: z.object({ data: z.object({ projects: z.array(projectSchema) }) }),
    handler: async ({ person }) => {
      const projects = await projectsOf(sql, (person as Person).userId);
      return { data: { projects: projects.map(presentProject) } };
    },
  });

  addRoute(ctx, {
    method: 'post',
    path: '/api/projects',
    tag: TAG,
    summary: "Make a project; its maker is its first admin, and its test repository, when it is on the server's GitHub or GitLab, is bound to it",
    person: 'instance-admin',
    body: newProjectSchema,
    status: 201,
    response: z.object({ data: z.object({ project: projectSchema }) }),
    handler: async ({ body, person }) => {
      const { userId } = person as Person;
      await requireProjectMaker(sql, person as Person);
      const project = await makeProject(
        sql,
        { name: body.name, repoUrl: body.repo_url ?? null, repoName: body.repo_name },
        { actor: { kind: 'user', id: userId }, admin: userId },
        config.notify,
        clock(),
      );
      return { data: { project: presentProject(project) } };
    },
  });
}

/**
 * The project of the request itself (/api/project): its test repository (which a project that
 * only receives reports goes without until it is to trigger runs) and its settings.
 */
export function projectSettingRoutes(ctx: RouteContext, deps: Pick<AppDeps, 'sql' | 'clock'>): void {
  const { sql, clock } = deps;

  addRoute(ctx, {
    method: 'get',
    path: '/api/project',
    tag: TAG,
    summary: 'The project of the request: its test repository and its settings',
    response: projectResponse,
    handler: async ({ scope }) => ({ data: { project: presentProject(await projectOfScope(sql, scope)) } }),
  });

  addRoute(ctx, {
    method: 'patch',
    path: '/api/project',
    tag: TAG,
    summary:
      'Change the project of the request: its name, its test repository (set one to trigger runs; null for a project that only receives reports) and whether environments are made on first use',
    body: projectUpdateSchema,
    response: projectResponse,
    handler: async ({ body, scope }) => ({ data: { project: presentProject(await changeProject(sql, scope, body, clock())) } }),
  });
}
