import { z } from 'zod';
import { recordChange } from '../audit/index.ts';
import { bindAtSetup } from '../bindings/index.ts';
import type { AppDeps } from '../context.ts';
import { ForbiddenError } from '../errors.ts';
import type { Person } from '../http/access.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import {
  addMember,
  allProjects,
  createProject,
  newProjectSchema,
  presentProject as present,
  projectSchema,
  projectsOfUser,
  repoNameFor,
} from '../projects/index.ts';
import { isInstanceAdmin } from '../users/index.ts';

// Projects themselves: an instance admin makes them (and becomes their first admin) and sees
// every one; anyone else sees the projects they belong to.

/** A person who may make projects: an instance admin, by a session or a personal key of scope admin. */
async function requireInstanceAdmin(sql: AppDeps['sql'], person: Person): Promise<void> {
  if (!(await isInstanceAdmin(sql, person.userId))) throw new ForbiddenError('POST /api/projects needs an instance admin');
  if (person.keyScope !== null && person.keyScope !== 'admin') throw new ForbiddenError('POST /api/projects needs a personal key of scope admin');
}

export function projectRoutes(ctx: RouteContext, deps: Pick<AppDeps, 'sql' | 'clock' | 'config'>): void {
  const { sql, clock, config } = deps;

  addRoute(ctx, {
    method: 'get',
    path: '/api/projects',
    tag: 'Projects',
    summary: "The projects a person belongs to; an instance admin's: every project",
    person: 'person',
    response: z.object({ data: z.object({ projects: z.array(projectSchema) }) }),
    handler: async ({ person }) => {
      const { userId } = person as Person;
      const projects = (await isInstanceAdmin(sql, userId)) ? await allProjects(sql) : await projectsOfUser(sql, userId);
      return { data: { projects: projects.map(present) } };
    },
  });

  addRoute(ctx, {
    method: 'post',
    path: '/api/projects',
    tag: 'Projects',
    summary: "Make a project; its maker is its first admin, and its test repository, when it is on the server's GitHub or GitLab, is bound to it",
    person: 'instance-admin',
    body: newProjectSchema,
    status: 201,
    response: z.object({ data: z.object({ project: projectSchema }) }),
    handler: async ({ body, person }) => {
      const { userId } = person as Person;
      await requireInstanceAdmin(sql, person as Person);
      const project = await sql.begin(async (tx) => {
        const now = clock();
        const repoUrl = body.repo_url ?? null;
        const made = await createProject(tx, { name: body.name, repoUrl, repoName: repoNameFor(repoUrl, body.repo_name) });
        await addMember(tx, made.id, userId, 'admin', now);
        const actor = { kind: 'user', id: userId } as const;
        await recordChange(tx, { projectId: made.id, actor, action: 'project.created', target: `project:${made.id}`, after: present(made) }, now);
        // Its own test repository on the server's GitHub or GitLab is bound at once (docs/decisions/repository-bindings.md).
        await bindAtSetup(tx, made, actor, config.notify, now);
        return made;
      });
      return { data: { project: present(project) } };
    },
  });
}
