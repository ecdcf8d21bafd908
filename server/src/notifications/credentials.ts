import { isBound } from '../bindings/index.ts';
import type { NotifySettings } from '../config.ts';
import type { Tx } from '../db.ts';
import type { StoredDestination } from './store.ts';

// The server's own credentials (its GitHub App, its GitLab token) act for every project, so a
// project reaches with them only the repositories an instance admin bound to it. A destination
// with a token of the project's own acts with that token's rights alone and is not limited here.
// Checked when a destination is saved and again at each delivery, before anything is sent: a
// binding removed since, or a destination saved before bindings existed, sends nothing.

/** Which of the server's credentials a GitHub or GitLab destination uses, and where; null when it has a token of its own. */
function serverCredentialOf(d: Pick<StoredDestination, 'type' | 'repo' | 'project' | 'token'>) {
  if (d.token !== null) return null;
  if (d.type === 'github' && d.repo !== null) return { host: 'github' as const, name: d.repo, field: 'repo', credential: "the server's GitHub App" };
  if (d.type === 'gitlab' && d.project !== null) return { host: 'gitlab' as const, name: d.project, field: 'project', credential: "the server's GitLab token" };
  return null;
}

/**
 * Why the destination may not use the server's credential for the project, in the words of a
 * refusal of the field that names the repository (`body.repo: …`); null when it may.
 */
export async function unboundProblem(
  sql: Tx,
  projectId: number,
  d: Pick<StoredDestination, 'type' | 'repo' | 'project' | 'token'>,
): Promise<{ field: string; message: string } | null> {
  const uses = serverCredentialOf(d);
  if (!uses || (await isBound(sql, projectId, uses.host, uses.name))) return null;
  const what = uses.host === 'github' ? 'repository' : 'GitLab project';
  return {
    field: uses.field,
    message: `${what} ${uses.name} is not bound to this project: ${uses.credential} acts only where an instance admin bound it (POST /api/projects/{id}/repository-bindings), or give a token of the project's own`,
  };
}

/** At delivery: the refusal to record, without calling GitHub or GitLab, when the destination may not use the server's credential. */
export async function refusedAtDelivery(sql: Tx, destination: StoredDestination, settings: NotifySettings): Promise<string | null> {
  if (destination.type !== 'github' && destination.type !== 'gitlab') return null;
  if (destination.token === null && destination.type === 'gitlab' && settings.gitlabToken === null)
    return 'not sent: no token, and the server has no GitLab token (PROCTOR_GITLAB_TOKEN)';
  const problem = await unboundProblem(sql, destination.project_id, destination);
  return problem ? `not sent: ${problem.message}` : null;
}
