// A workspace used as it is: its dependencies are found installed by what is on disk, for npm,
// yarn classic, yarn berry (Plug'n'Play) and pnpm, whatever their packages' `exports` say.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { missingDependencies } from '../../reporter/src/toolchain/repository.ts';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A workspace declaring `a` and `@scope/b`, its files written as given. */
function workspace(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-workspace-deps-'));
  made.push(dir);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ dependencies: { a: '1' }, devDependencies: { '@scope/b': '1' } }));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

/** A package.json whose `exports` leave package.json itself out, as 7 of a real suite's 13 did. */
const closed = JSON.stringify({ name: 'x', exports: { '.': './index.js' } });

describe('dependencies of a workspace', () => {
  it('when npm or yarn classic installed them, even with `exports` that leave package.json out, then none is missing', () => {
    expect(missingDependencies(workspace({ 'node_modules/a/package.json': closed, 'node_modules/@scope/b/package.json': closed }))).toEqual([]);
  });

  it('when a package of a yarn workspace is hoisted to a parent folder, then it is found there', () => {
    const root = workspace({ 'node_modules/a/package.json': closed, 'node_modules/@scope/b/package.json': closed });
    const member = path.join(root, 'packages', 'e2e');
    fs.mkdirSync(member, { recursive: true });
    fs.writeFileSync(path.join(member, 'package.json'), JSON.stringify({ devDependencies: { a: '1' } }));
    expect(missingDependencies(member)).toEqual([]);
  });

  it("when pnpm installed them (node_modules' links into its store), then none is missing", () => {
    const dir = workspace({
      'node_modules/.pnpm/a@1/node_modules/a/package.json': closed,
      'node_modules/.pnpm/@scope+b@1/node_modules/@scope/b/package.json': closed,
      'pnpm-lock.yaml': '',
    });
    fs.symlinkSync(path.join(dir, 'node_modules/.pnpm/a@1/node_modules/a'), path.join(dir, 'node_modules/a'), 'dir');
    fs.mkdirSync(path.join(dir, 'node_modules/@scope'));
    fs.symlinkSync(path.join(dir, 'node_modules/.pnpm/@scope+b@1/node_modules/@scope/b'), path.join(dir, 'node_modules/@scope/b'), 'dir');
    expect(missingDependencies(dir)).toEqual([]);
  });

  it("when yarn berry installed them with Plug'n'Play (no node_modules), then none is missing", () => {
    expect(missingDependencies(workspace({ '.pnp.cjs': '', 'yarn.lock': '' }))).toEqual([]);
  });

  it('when a dependency is not on disk, then it is named missing', () => {
    expect(missingDependencies(workspace({ 'node_modules/a/package.json': closed }))).toEqual(['@scope/b']);
  });
});
