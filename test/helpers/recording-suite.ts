import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createKey } from '../../server/src/auth/store.ts';
import type { Sql } from '../../server/src/db.ts';
import { createProject } from '../../server/src/projects/store.ts';

export interface RecordingSuite {
  /** The suite's git repository (branch `main`, one commit). */
  repo: string;
  /** Where its tests record each execution (`RECORD_DIR` in its `.env`). */
  records: string;
  projectId: number;
  key: string;
}

export function git(dir: string, ...args: string[]): void {
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=Test', ...args], { cwd: dir, stdio: 'ignore' });
}

/**
 * `files` (a Playwright suite on @playwright/test 1.65.1) in a git repository, its tests recording
 * their executions in a folder of their own; a project `name` of it with a `ci` environment that
 * reads the suite's `.env`.
 */
export async function recordingSuite(sql: Sql, name: string, files: Record<string, string>): Promise<RecordingSuite> {
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), `proctor-${name}-repo-`));
  const records = fs.mkdtempSync(path.join(os.tmpdir(), `proctor-${name}-records-`));
  // The suite runs as the runner user when the runner is root: it writes here too.
  fs.chmodSync(records, 0o777);
  const all = {
    ...files,
    'package.json': JSON.stringify({ name: `${name}-suite`, private: true, type: 'module', devDependencies: { '@playwright/test': '1.65.1' } }),
    '.env': `RECORD_DIR=${records}\n`,
  };
  for (const [file, content] of Object.entries(all)) {
    fs.mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    fs.writeFileSync(path.join(repo, file), content);
  }
  git(repo, 'init', '--quiet', '--initial-branch=main');
  git(repo, 'add', '.');
  git(repo, 'commit', '--quiet', '-m', 'suite');
  const project = await createProject(sql, { name, repoUrl: repo, repoName: `acme/${name}` });
  await sql`insert into environments (project_id, slug, name, env_files) values (${project.id}, 'ci', 'CI', '{.env}')`;
  return { repo, records, projectId: project.id, key: await createKey(sql, { projectId: project.id }) };
}
