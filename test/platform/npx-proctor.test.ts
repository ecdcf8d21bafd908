import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/playwright.ts';

// `npx proctor …` in a clone, as the README, the server's hints and the pages print it (issue 52,
// point 2). npm links a package's command at install only when its file exists, and in a clone
// `npm ci` installs before `prepare` builds dist/: the command's file is the repository's own.

const serverPackage = JSON.parse(fs.readFileSync(path.join(ROOT, 'server/package.json'), 'utf8')) as {
  version: string;
  bin: Record<string, string>;
  files: string[];
};

describe('npx proctor in a clone', () => {
  it('when the server package names its command, then its file is in the repository and in the package, so that npm ci links it before any build', () => {
    const bin = serverPackage.bin.proctor as string;
    expect(bin.startsWith('dist/')).toBe(false);
    const tracked = execFileSync('git', ['ls-files', '--stage', '--', `server/${bin}`], { cwd: ROOT, encoding: 'utf8' });
    // Mode 100755: executable as a checkout leaves it.
    expect(tracked).toMatch(new RegExp(`^100755 \\w+ 0\\tserver/${bin}\\n$`));
    expect(serverPackage.files).toContain(bin.split('/')[0]);
  });

  it('when `npx proctor` runs in the clone, then it runs the built command', () => {
    const help = spawnSync('npx', ['--no', 'proctor', 'help'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' } });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^usage: proctor <command>/);
    const version = spawnSync('npx', ['--no', 'proctor', '--', '--version'], { cwd: ROOT, encoding: 'utf8' });
    expect(version.stdout.trim(), version.stderr).toBe(serverPackage.version);
  });
});
