import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provingRun } from '../../server/src/visual/baselines.ts';
import type { LaterRun } from '../../server/src/visual/commit-store.ts';
import { descendantsOf } from '../../server/src/visual/git-push.ts';

// A baseline commit proved by a later run on a commit descending from it (issue 57, point 4;
// docs/decisions/visual-descendant-proof.md), told by the project's real git repository: on
// `feature-x`, the baseline commit B, then C and D on top; `other` forks before B.

let dir: string;
let repo: string;
const sha: Record<string, string> = {};

function git(...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@localhost', '-c', 'commit.gpgsign=false', ...args], {
    cwd: repo,
    encoding: 'utf8',
  }).trim();
}

function commit(name: string): string {
  fs.writeFileSync(path.join(repo, `${name}.txt`), name);
  git('add', '.');
  git('commit', '--quiet', '-m', name);
  sha[name] = git('rev-parse', 'HEAD');
  return sha[name] as string;
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-descendant-'));
  repo = path.join(dir, 'repo');
  fs.mkdirSync(repo);
  git('init', '--quiet', '--initial-branch=main');
  commit('A');
  git('checkout', '--quiet', '-b', 'other');
  commit('X');
  git('checkout', '--quiet', 'main');
  git('checkout', '--quiet', '-b', 'feature-x');
  commit('B');
  commit('C');
  commit('D');
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const baseline = () => ({ commit_sha: sha.B as string, branch: 'feature-x', repo_url: repo });
const run = (id: number, state: string, name: string | null): LaterRun => ({ id, number: id, state, commit: name === null ? null : (sha[name] ?? name) });

describe("a later run's commit, as the project's repository tells it", () => {
  it('when commits follow the baseline commit on its branch, then they descend from it; an older one, a fork and an unknown one do not', async () => {
    const found = await descendantsOf(repo, 'feature-x', sha.B as string, [sha.B, sha.C, sha.D, sha.A, sha.X, 'f'.repeat(40)] as string[]);
    expect(found).toEqual(new Set([sha.B, sha.C, sha.D]));
  });

  it('when the repository cannot be read, then nothing is told (null)', async () => {
    expect(await descendantsOf(path.join(dir, 'gone'), 'feature-x', sha.B as string, [sha.C as string])).toBeNull();
    expect(await descendantsOf(repo, 'no-such-branch', sha.B as string, [sha.C as string])).toBeNull();
  });
});

describe('the run that proves a baseline commit', () => {
  it('when the first later run that ended is on a descending commit, then it proves the commit', async () => {
    expect(await provingRun(baseline(), [run(5, 'passed', 'D')])).toEqual({ run: run(5, 'passed', 'D'), checked: null });
  });

  it('when a run ended first on a commit without the baselines (before them), then it is passed over and marked looked at, and the descending one proves it', async () => {
    const runs = [run(5, 'failed', 'A'), run(6, 'failed', null), run(7, 'passed', 'C'), run(8, 'passed', 'D')];
    expect(await provingRun(baseline(), runs)).toEqual({ run: runs[2], checked: 6 });
  });

  it('when the first later run on a descending commit is still running, then nothing proves it yet, and it is waited for', async () => {
    const runs = [run(5, 'failed', 'X'), run(6, 'running', 'C'), run(7, 'passed', 'D')];
    expect(await provingRun(baseline(), runs)).toEqual({ run: null, checked: 5 });
  });

  it('when a run on the baseline commit itself comes first, then it proves it without asking the repository', async () => {
    let asked = 0;
    const counting: typeof descendantsOf = async (...args) => {
      asked += 1;
      return descendantsOf(...args);
    };
    expect(await provingRun(baseline(), [run(5, 'passed', 'B'), run(6, 'passed', 'D')], counting)).toEqual({ run: run(5, 'passed', 'B'), checked: null });
    expect(asked).toBe(0);
  });

  it('when the project has no repository, then only a run on the baseline commit itself proves it, the others are looked at once', async () => {
    const runs = [run(5, 'passed', 'D'), run(6, 'passed', 'B')];
    expect(await provingRun({ ...baseline(), repo_url: null }, runs)).toEqual({ run: runs[1], checked: 5 });
  });
});
