import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/playwright.ts';
import { seedUser, startTestServer, type TestServer } from '../helpers/server.ts';
import { signInHint } from '../../server/src/users/index.ts';

// `npx proctor …` in a clone, as the README, the server's hints and the pages print it (issue 52,
// point 2). npm links a package's command at install only when its file exists, and in a clone
// `npm ci` installs before `prepare` builds dist/: the command's file is the repository's own.

const serverPackage = JSON.parse(fs.readFileSync(path.join(ROOT, 'server/package.json'), 'utf8')) as {
  version: string;
  bin: Record<string, string>;
  files: string[];
};

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

/**
 * `npx proctor <args>` in the clone, on the test server's data; not spawnSync: the embedded
 * database answers from this process, which must keep running meanwhile.
 */
async function npxProctor(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn('npx', ['--no', 'proctor', ...args], {
    cwd: ROOT,
    env: { ...process.env, npm_config_update_notifier: 'false', DATABASE_URL: server.db.url, PORT: '', PUBLIC_URL: '', LOG_LEVEL: 'warn' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { status, stdout, stderr };
}

describe('npx proctor in a clone', () => {
  it('when the server package names its command, then its file is in the repository and in the package, so that npm ci links it before any build', () => {
    const bin = serverPackage.bin.proctor as string;
    expect(bin.startsWith('dist/')).toBe(false);
    const tracked = execFileSync('git', ['ls-files', '--stage', '--', `server/${bin}`], { cwd: ROOT, encoding: 'utf8' });
    // Mode 100755: executable as a checkout leaves it.
    expect(tracked).toMatch(new RegExp(`^100755 \\w+ 0\\tserver/${bin}\\n$`));
    expect(serverPackage.files).toContain(bin.split('/')[0]);
  });

  it('when `npx proctor` runs in the clone, then it runs the built command', async () => {
    const help = await npxProctor(['help']);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^usage: proctor <command>/);
    const version = await npxProctor(['--', '--version']);
    expect(version.stdout.trim(), version.stderr).toBe(serverPackage.version);
  });

  it("when the server's sign-in hint (`npx proctor user login-link --email …`) runs where it is printed, then it prints a link that signs the person in", async () => {
    // With no instance admin yet, the hint says how to make one, then how to sign in.
    await server.sql`update users set is_admin = false`;
    expect(await signInHint(server.sql)).toMatch(
      /^No one can sign in yet: npx proctor user create --email <your email> --name <your name> --admin, then npx proctor user login-link --email <your email>$/,
    );
    const { userId, email } = await seedUser(server.sql, []);
    await server.sql`update users set is_admin = true where id = ${userId}`;
    const hint = /one-time link: (npx proctor user login-link --email \S+)/.exec(await signInHint(server.sql))?.[1];
    expect(hint).toBe(`npx proctor user login-link --email ${email}`);
    const made = await npxProctor((hint as string).split(' ').slice(2));
    expect(made.status, made.stderr).toBe(0);
    const link = new URL(made.stdout.trim());
    const signedIn = await fetch(`${server.url}${link.pathname}${link.search}`, { redirect: 'manual' });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('set-cookie')).toMatch(/^proctor_session=/);
    const [sessions] = await server.sql<{ count: number }[]>`select count(*)::int as count from sessions where user_id = ${userId}`;
    expect(sessions?.count).toBe(1);
  });
});
