// bench/feedback's suite: 240 cheap tests (pure expects and short waits) over 40 spec files that
// import 10 helper modules, in a git repository the bench makes, and the commits that each break a
// few known tests: by a helper (every spec importing it is then affected, as Playwright's
// --only-changed computes it), by a spec, or by a new test. Each commit first undoes the previous
// one's break, so the tests that failed last time pass again: a failure to find is always a new one.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const SPECS = 40;
export const TESTS_PER_SPEC = 6;
const HELPERS = 10;
/** Tests that fail on their first attempt half of the time and pass on the retry: flaky, never failed. */
export const FLAKY = ['area-04 t1', 'area-11 t3', 'area-19 t0', 'area-22 t5', 'area-30 t2', 'area-38 t4'];

/**
 * What each breaking commit changes, and the tests it breaks: one of each kind, which keeps the
 * bench within a few minutes (each commit is four runs).
 */
export interface Breakage {
  name: string;
  /** Helper number → keys whose value it misreports. */
  helper?: { index: number; keys: string[] };
  /** Spec number → its tests (by number) whose expectation is wrong. */
  spec?: { index: number; tests: number[] };
  /** A new test in this spec, failing. */
  newTest?: number;
}

export const BREAKAGES: Breakage[] = [
  { name: 'a helper misreports two of its keys', helper: { index: 3, keys: ['area-13 t2', 'area-23 t4'] } },
  { name: 'a spec expects wrongly in two tests', spec: { index: 27, tests: [1, 4] } },
  { name: 'a new failing test and a spec broken beside it', spec: { index: 31, tests: [4] }, newTest: 8 },
];

/** The titles a breakage fails. */
export function brokenBy(breakage: Breakage): string[] {
  return [
    ...(breakage.helper?.keys ?? []),
    ...(breakage.spec?.tests.map((t) => `${specName(breakage.spec?.index as number)} t${t}`) ?? []),
    ...(breakage.newTest === undefined ? [] : [`${specName(breakage.newTest)} new`]),
  ];
}

function specName(index: number): string {
  return `area-${String(index).padStart(2, '0')}`;
}

/** A test's wait, ms: 5 to 50, varying by spec and test so that durations order the files. */
function waitMs(spec: number, test: number): number {
  return 5 + ((spec * 7 + test * 13) % 10) * 5;
}

function helperSource(index: number, misreported: string[]): string {
  const overrides = Object.fromEntries(misreported.map((key) => [key, -1]));
  return `// The value a spec's test checks: its key's length, unless misreported.
const overrides: Record<string, number> = ${JSON.stringify(overrides)};
export const helper = ${index};
export function valueOf(key: string): number {
  return overrides[key] ?? key.length;
}
`;
}

function specSource(index: number, wrong: number[], withNewTest: boolean): string {
  const name = specName(index);
  const tests = Array.from({ length: TESTS_PER_SPEC }, (_, t) => {
    const title = `${name} t${t}`;
    const flaky = FLAKY.includes(title) ? `  if (testInfo.retry === 0 && Math.random() < 0.5) throw new Error('flaky: lost a race');\n` : '';
    const expected = wrong.includes(t) ? `${title.length + 1}` : `'${title}'.length`;
    return `test('${title}', async ({}, testInfo) => {
${flaky}  await new Promise((resolve) => setTimeout(resolve, ${waitMs(index, t)}));
  expect(valueOf('${title}')).toBe(${expected});
});
`;
  });
  if (withNewTest) tests.push(`test('${name} new', () => {\n  expect(valueOf('${name} new')).toBe(0);\n});\n`);
  return `import { expect, test } from '@playwright/test';\nimport { valueOf } from './helpers/h${index % HELPERS}';\n\n${tests.join('\n')}`;
}

export interface SuiteRepo {
  dir: string;
  /** Commits the suite at the breakage (null: the suite unbroken); answers the commit. */
  commitAt(breakage: Breakage | null): string;
}

export function writeSuiteRepo(root: string, playwrightVersion: string): SuiteRepo {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-bench-feedback-'));
  fs.chmodSync(dir, 0o755);
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=bench@example.com', '-c', 'user.name=Bench', ...args], { cwd: dir, encoding: 'utf8' }).trim();
  const write = (file: string, content: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  };
  write('package.json', JSON.stringify({ name: 'feedback-suite', private: true, devDependencies: { '@playwright/test': playwrightVersion } }, null, 2));
  write('.gitignore', 'node_modules\ntest-results\n');
  // One worker per Playwright: the agents are the parallelism, and a test's place in the order is its time.
  write(
    'playwright.config.ts',
    `import { defineConfig } from '@playwright/test';\nexport default defineConfig({ testDir: './tests', retries: 1, workers: 1, timeout: 30_000, projects: [{ name: 'bench' }] });\n`,
  );
  // As a CI job's checkout: the suite's dependencies installed beside it (ignored by git).
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  git('init', '--quiet', '--initial-branch=main');
  let first = true;
  return {
    dir,
    commitAt(breakage) {
      for (let h = 0; h < HELPERS; h++) {
        write(`tests/helpers/h${h}.ts`, helperSource(h, breakage?.helper?.index === h ? breakage.helper.keys : []));
      }
      for (let s = 0; s < SPECS; s++) {
        write(`tests/${specName(s)}.spec.ts`, specSource(s, breakage?.spec?.index === s ? breakage.spec.tests : [], breakage?.newTest === s));
      }
      git('add', '-A');
      git('commit', '--quiet', '--allow-empty', '-m', first ? 'the suite' : (breakage?.name ?? 'unbroken'));
      first = false;
      return git('rev-parse', 'HEAD');
    },
  };
}
