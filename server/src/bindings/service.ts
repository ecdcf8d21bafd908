import { type Actor, recordChange } from '../audit/index.ts';
import type { NotifySettings } from '../config.ts';
import type { Sql, Tx } from '../db.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { type Binding, type BindingHost, githubRepository, gitlabProject, type NewBinding } from './schema.ts';
import { deleteBinding, findBinding, getBinding, insertBinding } from './store.ts';

// Binding is an instance admin's act (the API checks who asks; the command line is the operator):
// the server's GitHub App and GitLab token act for every project, so which repositories a project
// may reach with them is not the project's to say. Each bind and unbind is an audit event of the
// project, in the transaction of the change.

const userOf = (actor: Actor) => (actor.kind === 'user' ? actor.id : null);

async function bindIn(tx: Tx, projectId: number, actor: Actor, given: NewBinding, now: Date): Promise<Binding | null> {
  const binding = await insertBinding(tx, projectId, given, userOf(actor), now);
  if (binding) await recordChange(tx, { projectId, actor, action: 'repository.bound', target: `repository-binding:${binding.id}`, after: binding }, now);
  return binding;
}

/** Binds a repository to the project; a 409 when it is bound already. */
export async function bindRepository(sql: Sql, projectId: number, actor: Actor, given: NewBinding, now: Date): Promise<Binding> {
  const binding = await sql.begin((tx) => bindIn(tx, projectId, actor, given, now));
  if (!binding) throw new ConflictError(`body.name: ${given.host} repository ${given.name} is bound to this project already`);
  return binding as Binding;
}

/** Unbinds one of the project's repositories: the server's credentials stop acting there at the next delivery. */
export async function unbindRepository(sql: Sql, projectId: number, actor: Actor, id: number, now: Date): Promise<Binding> {
  return sql.begin(async (tx) => {
    const binding = await getBinding(tx, projectId, id);
    if (!binding || !(await deleteBinding(tx, projectId, id))) throw new NotFoundError('repository binding not found');
    await recordChange(tx, { projectId, actor, action: 'repository.unbound', target: `repository-binding:${id}`, before: binding }, now);
    return binding;
  }) as Promise<Binding>;
}

/** Whether an instance admin bound `name` on `host` to the project (GitHub and GitLab names compare without case). */
export async function isBound(sql: Tx, projectId: number, host: BindingHost, name: string): Promise<boolean> {
  return (await findBinding(sql, projectId, host, name)) !== null;
}

/** The web host of a forge from its API's URL: `api.github.com` is github.com's; GitHub Enterprise's and GitLab's API sit on the web host. */
function webHost(apiUrl: string): string {
  const host = new URL(apiUrl).hostname.toLowerCase();
  return host === 'api.github.com' ? 'github.com' : host;
}

/** The host and path of a git URL: `https://host/path`, `ssh://git@host/path`, or scp-like `git@host:path`; null for a folder. */
function hostAndPath(repoUrl: string): { host: string; path: string } | null {
  if (!repoUrl.includes('://')) {
    const scp = /^(?:[^@/]+@)?([^@/:]+):(.+)$/.exec(repoUrl);
    return scp ? { host: (scp[1] as string).toLowerCase(), path: scp[2] as string } : null;
  }
  try {
    const url = new URL(repoUrl);
    if (!['https:', 'http:', 'ssh:', 'git:'].includes(url.protocol)) return null;
    return { host: url.hostname.toLowerCase(), path: decodeURIComponent(url.pathname) };
  } catch {
    return null;
  }
}

/**
 * The repository a project's test repository URL names on the server's GitHub or GitLab, if it is
 * one there: what `bindAtSetup` binds.
 */
export function forgeRepositoryOf(repoUrl: string, settings: Pick<NotifySettings, 'githubApiUrl' | 'gitlabApiUrl'>): NewBinding | null {
  const found = hostAndPath(repoUrl.trim());
  if (!found) return null;
  const path = found.path
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
  if (found.host === webHost(settings.githubApiUrl) && githubRepository.safeParse(path).success) return { host: 'github', name: path };
  if (found.host === webHost(settings.gitlabApiUrl) && !/^\d+$/.test(path) && gitlabProject.safeParse(path).success) return { host: 'gitlab', name: path };
  return null;
}

/**
 * At a project's setup by an instance admin (or the command line), its own test repository is
 * bound when it is on the server's GitHub or GitLab (docs/decisions/repository-bindings.md).
 * Returns the binding, or null when the URL names neither.
 */
export async function bindAtSetup(
  tx: Tx,
  project: { id: number; repo_url: string | null },
  actor: Actor,
  settings: Pick<NotifySettings, 'githubApiUrl' | 'gitlabApiUrl'>,
  now: Date,
): Promise<Binding | null> {
  // A project made without a repository (reports only) has nothing to bind.
  const repository = project.repo_url === null ? null : forgeRepositoryOf(project.repo_url, settings);
  return repository ? bindIn(tx, project.id, actor, repository, now) : null;
}
