import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveBranch } from '../../server/src/runs/branch.ts';
import { installDependencies, parseEnvFile } from '../../reporter/src/toolchain/repository.ts';
import { EXAMPLES } from '../helpers/playwright.ts';

describe('the repository layer', () => {
  it("when a folder's dependencies already resolve, then nothing is installed and nothing is written into it", async () => {
    const lines: string[] = [];
    expect(
      await installDependencies(EXAMPLES, (line) => lines.push(line), { ownFolder: true, runner: { user: null, home: '/nonexistent', modules: null } }),
    ).toBe(false);
    expect(lines).toEqual([]);
    expect(fs.existsSync(path.join(EXAMPLES, 'node_modules'))).toBe(false);
    expect(fs.existsSync(path.join(EXAMPLES, 'package-lock.json'))).toBe(false);
  });

  it('when env files are read, then quotes, comments and export are handled', () => {
    expect(parseEnvFile('# comment\nexport A=1\nB="two words"\nC=\'x\' \nD=plain # trailing\n\nnot a line')).toEqual({
      A: '1',
      B: 'two words',
      C: 'x',
      D: 'plain',
    });
  });

  it('when resolving a branch, then branch wins, else a build branch the repository has, else the default', () => {
    const found = { defaultBranch: 'main', branches: new Set(['main', 'release']) };
    expect(resolveBranch(found, 'x', 'release')).toBe('x');
    expect(resolveBranch(found, null, 'release')).toBe('release');
    expect(resolveBranch(found, null, 'gone')).toBe('main');
    expect(resolveBranch(found, null, null)).toBe('main');
  });
});
