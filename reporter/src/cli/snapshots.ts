import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { getJson, type TransportOptions } from '../api/transport.ts';
import type { BaselinesAnswer } from '../api/wire.ts';
import { EXIT, exitCodeOf, type ExitCode, openCommand, UsageError } from './exit.ts';

// `proctor-ci snapshots pull RUN_ID`: the screenshots approved in a run's visual review written
// into a local checkout, where Playwright looks for its baselines (the server computes the paths
// from the snapshot layout the run's reporter reported), for a team that commits them itself.

export const SNAPSHOTS_USAGE = `usage: proctor-ci snapshots pull RUN_ID [--dir DIR] [--json]
  Writes the screenshots approved in run RUN_ID's visual review into the checkout at DIR (by default
  the git checkout holding the current folder), each where Playwright looks for its baseline: the
  path the project's snapshotPathTemplate (or Playwright's default) gives, the platform and project
  suffixes included. Commit them yourself. Exit code: 0 every approved image written (or none
  approved), 2 refused (a wrong key or run, an image whose path the server could not tell), 3
  Proctor could not be reached. From the environment: PROCTOR_URL, PROCTOR_API_KEY,
  PROCTOR_PROJECT_ID (a personal key).`;

interface PullSettings {
  transport: TransportOptions;
  runId: number;
  dir: string;
  json: boolean;
}

/** The folder holding `.git` at or above `dir`; `dir` itself when there is none. */
function checkoutOf(dir: string): string {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    if (fs.existsSync(path.join(at, '.git'))) return at;
    if (path.dirname(at) === at) return path.resolve(dir);
  }
}

function parsePullSettings(args: string[], env: NodeJS.ProcessEnv): PullSettings {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { dir: { type: 'string' }, json: { type: 'boolean' } }, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const [verb, run, ...rest] = parsed.positionals;
  if (verb !== 'pull') throw new UsageError(`unknown snapshots command "${verb ?? ''}": pull is the one there is`);
  if (!run || !/^[1-9]\d{0,9}$/.test(run) || rest.length > 0) throw new UsageError('name one run by its id: snapshots pull RUN_ID');
  const url = env.PROCTOR_URL?.trim().replace(/\/+$/, '');
  const apiKey = env.PROCTOR_API_KEY?.trim();
  if (!url || !apiKey) throw new UsageError('PROCTOR_URL and PROCTOR_API_KEY name the Proctor server and its key');
  const dir = parsed.values.dir ?? process.cwd();
  if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`--dir ${dir} is not a folder`);
  return {
    transport: { url, apiKey, projectId: env.PROCTOR_PROJECT_ID?.trim() || null, maxAttempts: 4, maxBackoffMs: 4000 },
    runId: Number(run),
    dir: parsed.values.dir ? path.resolve(dir) : checkoutOf(dir),
    json: Boolean(parsed.values.json),
  };
}

/** Where `relative` lands under `root`; null when it would leave it. */
function inside(root: string, relative: string): string | null {
  const target = path.resolve(root, ...relative.split('/'));
  return target.startsWith(root + path.sep) ? target : null;
}

export async function snapshotsCommand(args: string[], env: NodeJS.ProcessEnv): Promise<ExitCode> {
  const say = (message: string) => process.stderr.write(`proctor-ci snapshots: ${message}\n`);
  const opened = openCommand(args, SNAPSHOTS_USAGE, () => parsePullSettings(args, env), say);
  if ('exit' in opened) return opened.exit;
  const { settings } = opened;
  let answer: BaselinesAnswer;
  try {
    answer = await getJson<BaselinesAnswer>(settings.transport, `/api/test-runs/${settings.runId}/baselines`);
  } catch (error) {
    say((error as Error).message);
    return exitCodeOf(error);
  }
  const written: string[] = [];
  const problems: string[] = [];
  for (const file of answer.data.files) {
    const target = file.path === null ? null : inside(settings.dir, file.path);
    if (target === null) {
      problems.push(`${file.snapshot_name}${file.runner_project ? ` (${file.runner_project})` : ''}: ${file.reason ?? `${file.path} is outside the checkout`}`);
      continue;
    }
    const response = await fetch(file.image_url).catch((error: unknown) => error as Error);
    if (response instanceof Error || !response.ok) {
      problems.push(`${file.path}: the image could not be read (${response instanceof Error ? response.message : `HTTP ${response.status}`})`);
      continue;
    }
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, Buffer.from(await response.arrayBuffer()));
    written.push(file.path as string);
  }
  if (settings.json) process.stdout.write(`${JSON.stringify({ written, problems })}\n`);
  else {
    for (const file of written) process.stdout.write(`wrote ${file}\n`);
    for (const problem of problems) say(problem);
    if (answer.data.files.length === 0) process.stdout.write(`run ${settings.runId} has no approved screenshot\n`);
  }
  return problems.length > 0 ? EXIT.error : EXIT.passed;
}
