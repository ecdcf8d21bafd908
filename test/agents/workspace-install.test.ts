// `--install`: a workspace whose dependencies are missing is installed by its own package manager
// only when the agent is told to, as the runner (never with the agent's environment), and a failed
// install says its whole reason. The dependency is a local `file:` package, so npm installs it
// without a registry.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { missingDependencies, useWorkspace } from '../../reporter/src/toolchain/repository.ts';
import type { Runner } from '../../reporter/src/toolchain/sandbox.ts';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A workspace that depends on `local-dep`, a package of its own folder, not installed yet; and a runner of the server's user. */
function workspace(dependency: string): { dir: string; runner: Runner } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-workspace-install-'));
  made.push(root);
  const dir = path.join(root, 'suite');
  fs.mkdirSync(path.join(dir, 'vendor', 'local-dep'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'vendor', 'local-dep', 'package.json'), JSON.stringify({ name: 'local-dep', version: '1.0.0', main: 'index.js' }));
  fs.writeFileSync(path.join(dir, 'vendor', 'local-dep', 'index.js'), 'module.exports = 42;\n');
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'suite', private: true, devDependencies: { 'local-dep': dependency } }));
  const home = path.join(root, 'runner');
  fs.mkdirSync(path.join(home, 'tmp'), { recursive: true });
  return { dir, runner: { user: null, home, modules: null } };
}

describe('a workspace with --install', () => {
  it('when its dependencies are missing and --install is given, then its package manager installs them, and they are then found on disk', async () => {
    const { dir, runner } = workspace('file:./vendor/local-dep');
    expect(missingDependencies(dir)).toEqual(['local-dep']);
    const lines: string[] = [];
    await useWorkspace(dir, (line) => lines.push(line), { install: true, runner });
    expect(lines).toEqual(["installing the workspace's dependencies (npm install --no-audit --no-fund), as --install asks"]);
    expect(missingDependencies(dir)).toEqual([]);
    expect(fs.existsSync(path.join(dir, 'node_modules', 'local-dep', 'package.json'))).toBe(true);
    // npm ran as the runner: its cache is the runner's, not the agent's.
    expect(fs.existsSync(path.join(runner.home, '.npm'))).toBe(true);
  });

  it('when they are missing and --install is not given, then nothing is written and the reason names them and the way out', async () => {
    const { dir, runner } = workspace('file:./vendor/local-dep');
    const before = fs.readdirSync(dir).sort();
    await expect(useWorkspace(dir, () => undefined, { install: false, runner })).rejects.toThrow(
      "the workspace's dependencies are not installed (missing: local-dep): install them before the agent starts (npm install), or pass --install",
    );
    expect(fs.readdirSync(dir).sort()).toEqual(before);
  });

  it("when the install fails, then the error says the command and npm's own reason", async () => {
    // A version from a registry that answers nothing: the workspace's own .npmrc points npm at a
    // closed port of this machine, tried once.
    const { dir, runner } = workspace('1.0.0');
    fs.writeFileSync(path.join(dir, '.npmrc'), 'registry=http://127.0.0.1:9/\nfetch-retries=0\n');
    await expect(useWorkspace(dir, () => undefined, { install: true, runner })).rejects.toThrow(
      /^installing the workspace's dependencies \(npm install --no-audit --no-fund\) failed: [\s\S]*ECONNREFUSED[\s\S]*127\.0\.0\.1:9/,
    );
  });
});
