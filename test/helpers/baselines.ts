import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CHROMIUM_LAUNCH_OPTIONS, REPORTER, reporterEnv, ROOT } from './playwright.ts';
import { runReportedSuite, type ReportedSuite } from './reports.ts';

// A git repository whose Playwright suite (its config in `e2e/`, its tests in `e2e/tests/`) has
// screenshot tests in two Playwright projects, `desktop` and `Narrow Phone` (whose name Playwright
// sanitizes in file names); SHADE=black changes both screenshots of each. Its baselines are
// committed on `main`, and `feature-x` branches from there.

const SPEC = `
import { test, expect } from '@playwright/test';
const shade = process.env.SHADE ?? 'white';
const page = (box) => \`<body style="margin:0;background:white">\${box}</body>\`;

test.describe('home', () => {
  test('banner', async ({ page: p }) => {
    await p.setContent(page(\`<div style="width:40px;height:20px;margin:10px;background:\${shade}"></div>\`));
    await expect(p).toHaveScreenshot('banner.png');
  });

  test('card', async ({ page: p }) => {
    await p.setContent(page(\`<div style="width:30px;height:10px;margin:50px 60px;background:\${shade === 'white' ? 'white' : 'navy'}"></div>\`));
    await expect(p).toHaveScreenshot();
  });
});
`;

const CONFIG = `
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: './tests',
  workers: 2,
  use: { launchOptions: ${JSON.stringify(CHROMIUM_LAUNCH_OPTIONS)} },
  projects: [
    { name: 'desktop', use: { viewport: { width: 200, height: 100 } } },
    { name: 'Narrow Phone', use: { viewport: { width: 120, height: 100 } } },
  ],
});
`;

const CLI = path.join(ROOT, 'node_modules/@playwright/test/cli.js');

export const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@localhost', '-c', 'commit.gpgsign=false', ...args], { cwd, encoding: 'utf8' }).trim();

export interface SuiteRepository {
  /** The checkout, on `feature-x`. */
  dir: string;
  /** A clone of it, on `main`, with `feature-x` too: the project's repository, which a push goes to (Proctor reads a local bare repository as a folder). */
  remote: string;
  /** The baselines `main` and `feature-x` hold: repository path to bytes. */
  baselines: Map<string, Buffer>;
  featureHead: string;
}

/** Every file under `dir/e2e` whose name ends `.png`, by its path from `dir`. */
export function pngsUnder(dir: string): Map<string, Buffer> {
  const found = new Map<string, Buffer>();
  for (const entry of fs.readdirSync(path.join(dir, 'e2e'), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.png')) continue;
    const full = path.join(entry.parentPath, entry.name);
    if (full.includes(`${path.sep}results${path.sep}`) || full.includes(`${path.sep}test-results${path.sep}`)) continue;
    found.set(path.relative(dir, full).split(path.sep).join('/'), fs.readFileSync(full));
  }
  return found;
}

function playwright(cwd: string, args: string[], env: NodeJS.ProcessEnv, reporter = 'line'): Promise<ReportedSuite> {
  return runReportedSuite({ cli: CLI, cwd, reporter, reportFile: path.join(cwd, '..', `report-${Date.now()}.json`), env: { ...process.env, ...env }, args });
}

/** The repository with its baselines written by Playwright (`--update-snapshots`) and committed. */
export async function makeSuiteRepository(): Promise<SuiteRepository> {
  fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, '.tmp', 'baselines-suite-'));
  fs.mkdirSync(path.join(dir, 'e2e', 'tests'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'e2e', 'playwright.config.ts'), CONFIG);
  fs.writeFileSync(path.join(dir, 'e2e', 'tests', 'visual.spec.ts'), SPEC);
  fs.writeFileSync(path.join(dir, '.gitignore'), 'test-results/\nresults/\n*.json\n');
  const written = await playwright(path.join(dir, 'e2e'), ['--update-snapshots'], {});
  if (written.exitCode !== 0) throw new Error(`writing the baselines failed:\n${written.output}`);
  git(dir, 'init', '--quiet', '--initial-branch=main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '--quiet', '-m', 'the suite and its baselines');
  git(dir, 'checkout', '--quiet', '-b', 'feature-x');
  const remote = `${dir}-remote`;
  git(ROOT, 'clone', '--quiet', '--branch', 'main', dir, remote);
  git(remote, 'branch', '--quiet', 'feature-x', 'origin/feature-x');
  git(remote, 'remote', 'remove', 'origin');
  return { dir, remote, baselines: pngsUnder(dir), featureHead: git(dir, 'rev-parse', 'HEAD') };
}

/** The changed page reported to Proctor: a run of its own in `local`, or the run `PROCTOR_RUN_ID` names. */
export function reportChangedPage(repository: SuiteRepository, serverUrl: string, key: string, env: Record<string, string>): Promise<ReportedSuite> {
  return playwright(
    path.join(repository.dir, 'e2e'),
    [`--output=${path.join(repository.dir, 'e2e', 'results')}`],
    { ...reporterEnv(serverUrl, key), SHADE: 'black', ...env },
    REPORTER,
  );
}

/** A clone of `feature-x` in a folder of its own (under the repository's root, where Playwright resolves). */
export function cloneCheckout(repository: SuiteRepository, name: string): string {
  const dir = `${repository.dir}-${name}`;
  git(ROOT, 'clone', '--quiet', '--branch', 'feature-x', repository.remote, dir);
  return dir;
}

/** What Playwright's `--update-snapshots` writes on this machine for the changed page: the files it changed, by path. */
export async function updatedByPlaywright(repository: SuiteRepository): Promise<Map<string, Buffer>> {
  const dir = cloneCheckout(repository, 'updated');
  const updated = await playwright(path.join(dir, 'e2e'), ['--update-snapshots'], { SHADE: 'black' });
  if (updated.exitCode !== 0) throw new Error(`updating the baselines failed:\n${updated.output}`);
  git(dir, 'add', '-A');
  const changed = git(dir, 'diff', '--cached', '--name-only')
    .split('\n')
    .filter((line) => line.endsWith('.png'));
  const files = new Map(changed.map((file) => [file, fs.readFileSync(path.join(dir, file))]));
  fs.rmSync(dir, { recursive: true, force: true });
  return files;
}
