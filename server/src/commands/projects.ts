// `proctor project create`: a project made by the operator, in the audit trail with the operating
// system's user who ran the command (the API's maker is an instance admin, who becomes its admin).
import { loadConfig } from '../config.ts';
import type { Sql } from '../db.ts';
import { makeProject } from '../projects/service.ts';
import { commandLineActor, type Flags, required } from './usage.ts';

/** Runs a project command; null when `command` is not one. */
export async function projectCommand(sql: Sql, command: string, flags: Flags): Promise<string | null> {
  if (command !== 'project create') return null;
  // Without --repo, a project that only receives reports (the reporter, JUnit uploads).
  const repo = typeof flags.repo === 'string' ? flags.repo : null;
  const name = required(flags, 'name');
  const project = await makeProject(
    sql,
    { name, repoUrl: repo, repoName: flags['repo-name'] as string | undefined },
    { actor: commandLineActor(), admin: null },
    loadConfig().notify,
    new Date(),
  );
  return String(project.id);
}
