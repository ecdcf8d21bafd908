import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKey } from './auth/store.ts';
import type { Config } from './config.ts';
import { ADVISORY_LOCK, type Sql } from './db.ts';
import { createEnvironment } from './environments/store.ts';
import { countProjects, createProject } from './projects/store.ts';

export const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/', import.meta.url));

/**
 * On the first start with an empty database: a demo project whose test repository is the sample
 * suite, a `local` environment, and its key, printed once.
 */
export async function seedDemo(sql: Sql, config: Config, port: number): Promise<void> {
  const key = await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${ADVISORY_LOCK.demoSeed})`;
    if ((await countProjects(tx)) > 0) return null;
    const project = await createProject(tx, { name: 'Demo', repoUrl: path.resolve(EXAMPLES_DIR), repoName: 'proctor/demo' });
    await createEnvironment(tx, project.id, {
      name: 'Local',
      slug: 'local',
      runner_projects_match: [],
      runner_projects_ignore: [],
      scheduled_trigger: null,
    });
    return { projectId: project.id, key: await createKey(tx, { projectId: project.id }) };
  });
  if (!key) return;
  const base = config.publicUrl.includes(`:${config.port}`) ? config.publicUrl : `http://localhost:${port}`;
  process.stdout.write(
    [
      '',
      `Demo project created (id ${key.projectId}) with the sample suite in ${EXAMPLES_DIR} and environment "local".`,
      `Its API key, shown this once:`,
      '',
      `  ${key.key}`,
      '',
      `Try: curl -s -H "Authorization: Bearer ${key.key}" ${base}/api/environments`,
      '',
    ].join('\n'),
  );
}
