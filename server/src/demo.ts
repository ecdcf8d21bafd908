import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKey } from './auth/store.ts';
import { createUser } from './users/store.ts';
import { type Config, workRootOf } from './config.ts';
import { ADVISORY_LOCK, lockAdvisory, type Sql } from './db.ts';
import { createEnvironment } from './environments/store.ts';
import { addMember, countProjects, createProject } from './projects/store.ts';
import { createLoginLink, LOGIN_LINK_MINUTES } from './sessions/store.ts';
import { runnerModules, unreachableAncestor } from '@proctor/reporter/toolchain/staging';

export const EXAMPLES_DIR = fileURLToPath(new URL('../examples/', import.meta.url));

/**
 * The sample suite where the user who runs suites can read it. A server running as root hands
 * them to another user, who cannot reach a package installed under /root (npx's cache): there the
 * suite is copied into the data directory, beside a link to Proctor's Playwright as that user reads it.
 */
function sampleSuite(config: Config): string {
  const shipped = path.resolve(EXAMPLES_DIR);
  if (process.getuid?.() !== 0 || unreachableAncestor(path.join(shipped, 'package.json')) === null) return shipped;
  const copy = path.join(config.dataDir, 'demo');
  fs.rmSync(copy, { recursive: true, force: true });
  fs.cpSync(shipped, copy, { recursive: true, filter: (source) => path.basename(source) !== 'node_modules' });
  fs.symlinkSync(runnerModules(workRootOf(config)), path.join(copy, 'node_modules'), 'dir');
  return copy;
}

/**
 * On the first start with an empty database: a demo project whose test repository is the sample
 * suite, a `local` environment, its key, printed once, and a demo user with a sign-in link.
 */
export async function seedDemo(sql: Sql, config: Config, base: string): Promise<void> {
  const seeded = await sql.begin(async (tx) => {
    await lockAdvisory(tx, ADVISORY_LOCK.demoSeed);
    if ((await countProjects(tx)) > 0) return null;
    const suite = sampleSuite(config);
    const project = await createProject(tx, { name: 'Demo', repoUrl: suite, repoName: 'proctor/demo' });
    await createEnvironment(tx, project.id, {
      name: 'Local',
      slug: 'local',
      runner_projects_match: [],
      runner_projects_ignore: [],
      scheduled_trigger: null,
      burn_in_repeats: 0,
      max_failures: null,
      order_strategy: 'duration',
      playwright_args: [],
    });
    // A person to look at it in the dashboard, with a sign-in link valid for the next minutes.
    // An instance admin: the one who makes projects and brings people in, until there are others.
    const userId = await createUser(tx, { email: 'demo@proctor.invalid', name: 'Demo user', picture: '', isAdmin: true });
    await addMember(tx, project.id, userId, 'admin');
    const loginToken = await createLoginLink(tx, userId, new Date());
    return { suite, projectId: project.id, key: await createKey(tx, { projectId: project.id }), loginToken };
  });
  if (!seeded) return;
  process.stdout.write(
    [
      '',
      `Demo project created (id ${seeded.projectId}) with the sample suite in ${seeded.suite} and environment "local".`,
      `Its API key, shown this once:`,
      '',
      `  ${seeded.key}`,
      '',
      `Try: curl -s -H "Authorization: Bearer ${seeded.key}" ${base}/api/environments`,
      '',
      `The dashboard, signed in as the demo user (the link works once, within ${LOGIN_LINK_MINUTES} minutes):`,
      '',
      `  ${base}/sign-in/link?token=${seeded.loginToken}`,
      '',
      'Another link later: npx proctor user login-link --email demo@proctor.invalid',
      '',
    ].join('\n'),
  );
}
