import { audited, type Actor, recordChange } from '../audit/index.ts';
import { bindAtSetup } from '../bindings/index.ts';
import type { NotifySettings } from '../config.ts';
import type { Sql } from '../db.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import type { Person, Scope } from '../principals.ts';
import { isInstanceAdmin } from '../users/index.ts';
import { repoNameFor } from './repo-name.ts';
import { presentProject, type ProjectUpdateBody } from './schema.ts';
import { addMember, allProjects, createProject, getProject, type Project, projectsOfUser, updateProject } from './store.ts';

// Projects themselves: an instance admin (or the command line) makes them, binding their test
// repository when it is on the server's GitHub or GitLab, and sees every one; anyone else sees the
// projects they belong to. It stands above bindings and users in the layers, the projects' store
// below them (docs/architecture.md).

/** The projects a person sees: an instance admin's are every project. */
export async function projectsOf(sql: Sql, userId: string): Promise<Project[]> {
  return (await isInstanceAdmin(sql, userId)) ? allProjects(sql) : projectsOfUser(sql, userId);
}

/** Who may make projects: an instance admin, by a session or a personal key of scope admin. */
export async function requireProjectMaker(sql: Sql, person: Person): Promise<void> {
  if (!(await isInstanceAdmin(sql, person.userId))) throw new ForbiddenError('POST /api/projects needs an instance admin');
  if (person.keyScope !== null && person.keyScope !== 'admin') throw new ForbiddenError('POST /api/projects needs a personal key of scope admin');
}

export interface NewProjectInput {
  name: string;
  /** Null: a project that only receives reports (the reporter, JUnit uploads). */
  repoUrl: string | null;
  /** owner/name; by default from repoUrl. */
  repoName: string | undefined;
}

/**
 * A project made, audited as `actor`'s, with `admin` (the instance admin who made it through the
 * API; null from the command line) its first admin; its own test repository on the server's
 * GitHub or GitLab is bound at once (docs/decisions/repository-bindings.md). One transaction.
 */
export function makeProject(
  sql: Sql,
  given: NewProjectInput,
  maker: { actor: Actor; admin: string | null },
  settings: Pick<NotifySettings, 'githubApiUrl' | 'gitlabApiUrl'>,
  now: Date,
): Promise<Project> {
  const repoName = repoNameFor(given.repoUrl, given.repoName);
  return sql.begin(async (tx) => {
    const made = await createProject(tx, { name: given.name, repoUrl: given.repoUrl, repoName });
    if (maker.admin !== null) await addMember(tx, made.id, maker.admin, 'admin', now);
    await recordChange(
      tx,
      { projectId: made.id, actor: maker.actor, action: 'project.created', target: `project:${made.id}`, after: presentProject(made) },
      now,
    );
    await bindAtSetup(tx, made, maker.actor, settings, now);
    return made;
  });
}

/** The project of a request's scope. */
export async function projectOfScope(sql: Sql, scope: Scope): Promise<Project> {
  const project = await getProject(sql, scope.projectId);
  if (!project) throw new NotFoundError('project not found');
  return project;
}

/** The project of a request's scope changed: a new repository names itself unless repo_name is given; audited. */
export function changeProject(sql: Sql, scope: Scope, change: ProjectUpdateBody, now: Date): Promise<Project> {
  return audited(sql, scope, now, async (tx) => {
    const before = await getProject(tx, scope.projectId);
    if (!before) throw new NotFoundError('project not found');
    const repoName = change.repo_url !== undefined ? repoNameFor(change.repo_url, change.repo_name) : change.repo_name;
    const after = await updateProject(tx, scope.projectId, { ...change, repo_name: repoName });
    if (!after) throw new NotFoundError('project not found');
    return [after, { action: 'project.updated', target: `project:${after.id}`, before: presentProject(before), after: presentProject(after) }];
  });
}
