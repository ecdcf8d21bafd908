import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import type { RunnerListedTest, RunnerListing } from '@proctor/reporter/list';
import type { RepeatedTest, RepeatsReport } from '@proctor/reporter/repeats';
import { playwrightRegistry, provideFfmpeg, type VideoEncoder } from './ffmpeg.ts';
import { handOver, type Runner, runnerSpawnOptions } from './sandbox.ts';

/** Where Proctor's own packages resolve from for this runner: its readable copy, else where they are installed. */
function proctorRequire(runner: Runner): NodeJS.Require {
  return createRequire(runner.modules ? path.join(runner.modules, 'proctor.js') : import.meta.url);
}

/** A file of the reporter package, where the runner reads it. */
function reporterFile(runner: Runner, entry: '@proctor/reporter' | '@proctor/reporter/list' | '@proctor/reporter/repeats'): string {
  return proctorRequire(runner).resolve(entry);
}

/** Playwright could not be found or could not list the suite. */
export class ListingError extends Error {}

/** What the reporter package's list reporter writes. */
export type Listing = RunnerListing;

/** The repository's own Playwright, else Proctor's. */
export function playwrightCli(dir: string, runner: Runner): string {
  for (const resolver of [createRequire(path.join(dir, 'package.json')), proctorRequire(runner)]) {
    try {
      return resolver.resolve('@playwright/test/cli');
    } catch {
      // not installed there
    }
  }
  throw new ListingError('no @playwright/test to run');
}

/** The version of the Playwright that runs the suite in `dir`: its @playwright/test package.json, read from disk. */
export function playwrightVersion(dir: string, runner: Runner): string {
  const manifest = path.join(path.dirname(playwrightCli(dir, runner)), 'package.json');
  return (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/** Whether a Playwright has `--test-list` (1.56 and later); before it, tests are named by their locations. */
export function hasTestList(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10));
  return major > 1 || (major === 1 && minor >= 56);
}

/** The `playwright-core` folder of the Playwright that runs the suite in `dir`. */
function playwrightCoreOf(dir: string, runner: Runner): string {
  const playwright = createRequire(playwrightCli(dir, runner)).resolve('playwright/package.json');
  return path.dirname(createRequire(playwright).resolve('playwright-core/package.json'));
}

/** Links the system's ffmpeg where the suite's Playwright looks for its own, so that its videos are recorded. */
export function provideVideoEncoder(dir: string, env: NodeJS.ProcessEnv, runner: Runner): VideoEncoder {
  const registry = playwrightRegistry(env);
  if (!registry) return { kind: 'none', reason: 'PLAYWRIGHT_BROWSERS_PATH is 0: Playwright looks for ffmpeg inside its own package' };
  return provideFfmpeg(registry, playwrightCoreOf(dir, runner), { owner: runner.user });
}

/** Every test of every runner project, as Playwright lists it (run as the runner: the config is the suite's code). */
export async function listTests(dir: string, env: NodeJS.ProcessEnv, runner: Runner, playwrightArgs: readonly string[] = []): Promise<Listing> {
  const scratch = fs.mkdtempSync(path.join(runner.home, 'tmp', 'list-'));
  await handOver(runner, scratch);
  const output = path.join(scratch, 'list.json');
  try {
    await promisify(execFile)(
      process.execPath,
      // The run's Playwright arguments (its --config, --project, --grep) choose what is listed, as what is run.
      [playwrightCli(dir, runner), 'test', '--list', `--reporter=${reporterFile(runner, '@proctor/reporter/list')}`, `--output=${scratch}`, ...playwrightArgs],
      {
        ...runnerSpawnOptions(runner),
        cwd: dir,
        env: { ...env, PROCTOR_LIST_OUTPUT: output },
        timeout: 120_000,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    return JSON.parse(fs.readFileSync(output, 'utf8')) as Listing;
  } catch (error) {
    const detail = String((error as { stdout?: string }).stdout ?? '') + String((error as { stderr?: string }).stderr ?? (error as Error).message);
    throw new ListingError(`listing the tests failed: ${listingFailure(detail)}`, { cause: error });
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * A failed listing's output, short: its error lines (Playwright prints the error first, then a code
 * frame and a stack), then its last lines, which alone may be only the stack and "No tests found".
 */
function listingFailure(output: string): string {
  const lines = output
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  const tail = lines.slice(-5);
  const errors = lines.slice(0, -5).filter((line) => /^[A-Za-z]*Error\b/.test(line));
  const text = [...new Set([...errors.slice(0, 5), ...tail])].join(' ');
  return text.length > 8000 ? `${text.slice(0, 8000)}…` : text;
}

export interface Selection {
  /** Runner projects to run; null for all. */
  projects: string[] | null;
  tags: string[];
  /** The tests the ids select, or null for no id filter. */
  tests: RunnerListedTest[] | null;
}

/**
 * How a shard names its tests, as every supported Playwright understands: a `--test-list` file
 * where the suite's Playwright has it, else `file:line:column` locations (with `--project`), which
 * also select any other test written at the same place (a loop's).
 */
export type TestPick = { kind: 'list'; file: string } | { kind: 'locations'; locations: string[]; projects: string[] };

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Which tests a run runs: its environment's projects, its tags, its test ids. */
export function selectTests(listing: Listing | null, filter: { match: string[]; ignore: string[]; tags: string[]; testIds: string[] }): Selection {
  let projects: string[] | null = filter.match.length > 0 ? [...filter.match] : null;
  if (filter.ignore.length > 0) projects = (projects ?? listing?.projects ?? []).filter((name) => !filter.ignore.includes(name));
  const tags = filter.tags.map((tag) => (tag.startsWith('@') ? tag : `@${tag}`));
  let tests: RunnerListedTest[] | null = null;
  if (filter.testIds.length > 0) {
    const wanted = new Set(filter.testIds);
    tests = (listing?.tests ?? []).filter((t) => wanted.has(t.id));
  }
  return { projects, tags, tests };
}

/** `tests` as the suite's Playwright can be told them: a `--test-list` file written to `listFile`, or their locations. */
export function pickTests(tests: RunnerListedTest[], version: string, listFile: string): TestPick {
  if (!hasTestList(version))
    return { kind: 'locations', locations: [...new Set(tests.map(testLocation))], projects: [...new Set(tests.map((test) => test.runner_project))] };
  fs.writeFileSync(listFile, `${tests.map(testListLine).join('\n')}\n`, { mode: 0o644 });
  return { kind: 'list', file: listFile };
}

/** A test as a `--test-list` file names it. */
export function testListLine(test: RunnerListedTest): string {
  return [`[${test.runner_project}]`, test.file, ...test.titles].join(' › ');
}

/** A test's place, `file:line:column` with its file relative to the config's rootDir: a unit's name for it where Playwright has no `--test-list`. */
export function testLocation(test: RunnerListedTest): string {
  return `${test.file}:${test.line ?? 1}:${test.column ?? 1}`;
}

/** Whether a unit's line is a location (`testLocation`), not a `--test-list` line. */
export function isLocation(line: string): boolean {
  return /:\d+:\d+$/.test(line) && !line.startsWith('[');
}

/**
 * A location as a command-line filter: Playwright reads its file part as a regular expression tested
 * against the absolute path, so the rootDir-relative path is escaped and anchored at its end.
 */
function locationArg(location: string): string {
  const match = /^(.*):(\d+):(\d+)$/.exec(location);
  if (!match) throw new ListingError(`not a test location: ${location}`);
  return `/(?:^|\\/)${escapeRegExp(match[1] as string).replaceAll('/', '\\/')}$/:${match[2]}:${match[3]}`;
}

/** Whether a listed test is one the selection runs. */
export function isSelected(test: RunnerListedTest, selection: Selection, testIds: string[]): boolean {
  if (selection.projects && !selection.projects.includes(test.runner_project)) return false;
  if (testIds.length > 0 && !testIds.includes(test.id)) return false;
  return selection.tags.length === 0 || selection.tags.some((tag) => test.tags.includes(tag));
}

const BURN_IN_TIMEOUT_MS = 30 * 60_000;

/**
 * Runs `tests` `repeats` times each, with no retries, as the runner, and answers how many of each
 * one's repeats passed. Nothing is reported to Proctor: repeats would be results of one attempt.
 */
export async function runRepeats(
  dir: string,
  env: NodeJS.ProcessEnv,
  runner: Runner,
  tests: RunnerListedTest[],
  repeats: number,
  scratch: string,
): Promise<RepeatedTest[]> {
  const pick = pickTests(tests, playwrightVersion(dir, runner), path.join(scratch, 'burn-in.txt'));
  const output = path.join(scratch, 'burn-in.json');
  const args = [
    'test',
    ...pickArgs(pick),
    `--repeat-each=${repeats}`,
    '--retries=0',
    `--reporter=${reporterFile(runner, '@proctor/reporter/repeats')}`,
    `--output=${path.join(scratch, 'burn-in')}`,
  ];
  try {
    await promisify(execFile)(process.execPath, [playwrightCli(dir, runner), ...args], {
      ...runnerSpawnOptions(runner),
      cwd: dir,
      env: { ...env, PROCTOR_REPEATS_OUTPUT: output },
      timeout: BURN_IN_TIMEOUT_MS,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    // A failing repeat makes Playwright exit 1: the report says which.
    if (!fs.existsSync(output))
      throw new ListingError(
        `the burn-in of new tests failed: ${String((error as Error).message)
          .split('\n')
          .slice(-3)
          .join(' ')}`,
      );
  }
  return (JSON.parse(fs.readFileSync(output, 'utf8')) as RepeatsReport).tests;
}

/** `outputDir`: where Playwright writes test-results, a folder of the runner's (the suite's own folder may not be writable). */
export function shardArgs(
  runner: Runner,
  selection: Selection,
  shard: number,
  totalShards: number,
  pick: TestPick | null,
  outputDir: string,
  playwrightArgs: readonly string[] = [],
): string[] {
  // The pick's arguments right after `test`: see pickArgs. The run's own Playwright arguments
  // (checked by playwrightArgsProblem: options only) come before Proctor's, whose --grep of the
  // run's tags then wins.
  const args = [
    'test',
    ...(pick ? pickArgs(pick) : []),
    ...playwrightArgs,
    `--reporter=list,${reporterFile(runner, '@proctor/reporter')}`,
    `--output=${outputDir}`,
  ];
  if (totalShards > 1) args.push(`--shard=${shard}/${totalShards}`);
  for (const project of selection.projects ?? []) args.push('--project', project);
  if (selection.tags.length > 0) args.push('--grep', selection.tags.map((tag) => `${escapeRegExp(tag)}(?![\\w-])`).join('|'));
  return args;
}

function pickArgs(pick: TestPick): string[] {
  if (pick.kind === 'list') return ['--test-list', pick.file];
  // Locations first: before 1.5x `--project` takes every argument after it up to the next option.
  // A config without projects has one named '': no --project names it, and none is needed.
  return [...pick.locations.map(locationArg), ...pick.projects.filter(Boolean).flatMap((project) => ['--project', project])];
}

export interface ShardProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  output(): string;
}

const OUTPUT_TAIL = 20_000;

/** A shard, run as the runner in a process group of its own, so that cancel ends Playwright, its workers and browsers. */
export function spawnShard(dir: string, args: string[], env: NodeJS.ProcessEnv, runner: Runner): ShardProcess {
  const child = spawn(process.execPath, [playwrightCli(dir, runner), ...args], {
    ...runnerSpawnOptions(runner),
    cwd: dir,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-OUTPUT_TAIL);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => {
    child.on('exit', (code, signal) => resolve(signal ? null : code));
    child.on('error', () => resolve(null));
  });
  return { child, exited, output: () => output };
}

/**
 * Processes still carrying `marker` in their environment: Playwright starts browsers and its
 * webServer in process groups of their own, so a group kill can leave them behind.
 */
export function processesMarked(marker: string): number[] {
  const needle = Buffer.from(`PROCTOR_EXECUTION=${marker}\0`);
  const found: number[] = [];
  for (const entry of fs.existsSync('/proc') ? fs.readdirSync('/proc') : []) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/environ`).includes(needle)) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

export function killMarked(marker: string): void {
  for (const pid of processesMarked(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Ends the shard's whole process tree: TERM, then KILL after a grace period. */
export async function killShard(shard: ShardProcess, graceMs = 5000): Promise<void> {
  const pid = shard.child.pid;
  if (!pid || shard.child.exitCode !== null) return;
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-pid, name);
    } catch {
      // already gone
    }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), graceMs);
  await shard.exited;
  clearTimeout(timer);
  // Browsers may outlive Playwright's own exit: the group goes too.
  signal('SIGKILL');
}
