// A test's owners: the `owner` annotations it carries (`test('…', { annotation: { type: 'owner',
// description: '@team-checkout' } })`) and the owners the repository's CODEOWNERS file gives its
// file. The reporter runs in the checkout, so the file it reads is the one at the run's commit
// (docs/decisions/test-owners.md).
import fs from 'node:fs';
import path from 'node:path';
import type { TestCase } from '@playwright/test/reporter';
import { type Codeowners, detectDialect, parseCodeowners } from '../text/codeowners.ts';
import { storable } from '../text/ansi.ts';
import { WIRE_LIMITS } from '../api/wire.ts';

/** Where GitHub looks for the file (first found wins), then GitLab's own folder. */
export const CODEOWNERS_PATHS = ['.github/CODEOWNERS', 'CODEOWNERS', 'docs/CODEOWNERS', '.gitlab/CODEOWNERS'] as const;

/** The folder holding `.git` (a folder, or a file in a worktree or submodule) at or above `dir`; null outside a repository. */
export function repositoryRoot(dir: string): string | null {
  let current = path.resolve(dir);
  for (;;) {
    if (fs.existsSync(path.join(current, '.git'))) return current;
    const parent = path.dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

export interface FoundCodeowners {
  root: string;
  /** Relative to the root, `/`-separated. */
  file: string;
  codeowners: Codeowners;
}

/** The repository's CODEOWNERS file, parsed; null when there is no repository or no file. */
export function readCodeowners(dir: string): FoundCodeowners | null {
  const root = repositoryRoot(dir);
  if (!root) return null;
  for (const file of CODEOWNERS_PATHS) {
    let text: string;
    try {
      text = fs.readFileSync(path.join(root, file), 'utf8');
    } catch {
      continue;
    }
    return { root, file, codeowners: parseCodeowners(text, detectDialect(text, file)) };
  }
  return null;
}

/** Owners named by `owner` annotations: each description may name several, separated by commas or spaces. */
export function annotatedOwners(test: Pick<TestCase, 'annotations'>): string[] {
  return test.annotations
    .filter((annotation) => annotation.type === 'owner' && annotation.description)
    .flatMap((annotation) => (annotation.description as string).split(/[\s,]+/))
    .filter(Boolean);
}

export type OwnersOf = (test: TestCase) => string[];

/** Annotations first, then CODEOWNERS, each owner once, within the wire's limits. */
export function ownersResolver(dir: string): OwnersOf {
  const found = readCodeowners(dir);
  const cache = new Map<string, string[]>();
  const fromFile = (file: string): string[] => {
    if (!found) return [];
    const relative = path.relative(found.root, file).split(path.sep).join('/');
    let owners = cache.get(relative);
    if (!owners) cache.set(relative, (owners = found.codeowners.ownersOf(relative)));
    return owners;
  };
  return (test) => {
    const owners = [...new Set([...annotatedOwners(test), ...fromFile(test.location.file)])];
    return owners
      .slice(0, WIRE_LIMITS.ownersPerTest)
      .map((owner) => storable(owner).slice(0, WIRE_LIMITS.owner))
      .filter(Boolean);
  };
}
