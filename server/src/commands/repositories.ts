// `proctor repository …`: the repositories bound to a project, where the server's GitHub App and
// GitLab token may act for it. The command line is the operator's, as an instance admin's API is.
import { type BindingHost, githubRepository, gitlabProject } from '../bindings/schema.ts';
import { bindRepository, unbindRepository } from '../bindings/service.ts';
import { listBindings } from '../bindings/store.ts';
import type { Sql } from '../db.ts';
import { getProject } from '../projects/store.ts';
import { commandLineActor, type Flags, projectIdFlag, UsageError } from './usage.ts';

/** The repository `--github owner/name` or `--gitlab group/name|id` names, checked as the API checks it. */
function repositoryFlag(flags: Flags): { host: BindingHost; name: string } {
  const github = typeof flags.github === 'string' ? flags.github : undefined;
  const gitlab = typeof flags.gitlab === 'string' ? flags.gitlab : undefined;
  if ((github === undefined) === (gitlab === undefined)) throw new UsageError('give one of --github owner/name or --gitlab group/name|id');
  const host: BindingHost = github !== undefined ? 'github' : 'gitlab';
  const name = (github ?? gitlab) as string;
  const checked = (host === 'github' ? githubRepository : gitlabProject).safeParse(name);
  if (!checked.success) throw new UsageError(`--${host}: ${checked.error.issues[0]?.message}`);
  return { host, name };
}

async function projectOf(sql: Sql, flags: Flags): Promise<number> {
  const projectId = projectIdFlag(flags);
  if (!(await getProject(sql, projectId))) throw new UsageError(`no project ${projectId}`);
  return projectId;
}

/** Runs a repository command; null when `command` is not one. */
export async function repositoryCommand(sql: Sql, command: string, flags: Flags): Promise<string | null> {
  switch (command) {
    case 'repository bind': {
      const projectId = await projectOf(sql, flags);
      const binding = await bindRepository(sql, projectId, commandLineActor(), repositoryFlag(flags), new Date());
      return `bound ${binding.host} ${binding.name}`;
    }
    case 'repository unbind': {
      const projectId = await projectOf(sql, flags);
      const { host, name } = repositoryFlag(flags);
      const binding = (await listBindings(sql, projectId)).find((b) => b.host === host && b.name.toLowerCase() === name.toLowerCase());
      if (!binding) throw new UsageError(`${host} repository ${name} is not bound to project ${projectId}`);
      await unbindRepository(sql, projectId, commandLineActor(), binding.id, new Date());
      return `unbound ${binding.host} ${binding.name}`;
    }
    case 'repository list': {
      const bindings = await listBindings(sql, await projectOf(sql, flags));
      return [['host', 'name', 'bound_by', 'bound_at'], ...bindings.map((b) => [b.host, b.name, b.created_by ?? '-', b.created_at])]
        .map((row) => row.join('\t'))
        .join('\n');
    }
    default:
      return null;
  }
}
