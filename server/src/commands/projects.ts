// `proctor project create`: a project made by the operator, in the audit trail with the operating
// system's user who ran the command (the API's maker is an instance admin, who becomes its admin).
import { recordChange } from '../audit/store.ts';
import { bindAtSetup } from '../bindings/service.ts';
import { loadConfig } from '../config.ts';
import type { Sql } from '../db.ts';
import { repoNameFor } from '../projects/repo-name.ts';
import { createProject } from '../projects/store.ts';
import { commandLineActor, type Flags, required } from './usage.ts';

/** Runs a project command; null when `command` is not one. */
export async function projectCommand(sql: Sql, command: string, flags: Flags): Promise<string | null> {
  if (command !== 'project create') return null;
  // Without --repo, a project that only receives reports (the reporter, JUnit uploads).
  const repo = typeof flags.repo === 'string' ? flags.repo : null;
  const name = required(flags, 'name');
  const repoName = repoNameFor(repo, flags['repo-name'] as string | undefined);
  const settings = loadConfig().notify;
  const actor = commandLineActor();
  const project = await sql.begin(async (tx) => {
    const now = new Date();
    const made = await createProject(tx, { name, repoUrl: repo, repoName });
    const after = { ...made, created_at: made.created_at.toISOString() };
    await recordChange(tx, { projectId: made.id, actor, action: 'project.created', target: `project:${made.id}`, after }, now);
    if (made.repo_url !== null) await bindAtSetup(tx, { id: made.id, repo_url: made.repo_url }, actor, settings, now);
    return made;
  });
  return String(project.id);
}
