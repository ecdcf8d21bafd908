import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { stageToolchain, unreachableAncestor } from './staging.ts';

/**
 * Who runs a suite's code (npm's install scripts, Playwright's config, the tests): test code is
 * untrusted. A server running as root hands it to an unprivileged user, which can neither read the
 * server's environment (`/proc/<pid>/environ` is its owner's) nor its data directory; otherwise it
 * runs as the server's own user, with only the clean environment below.
 */
export interface Runner {
  /** null: the server's own user. */
  user: { name: string; uid: number; gid: number } | null;
  /** The runner's home, its TMPDIR and npm cache: a folder the runner owns, shared by its runs. */
  home: string;
  /** Where the runner finds Proctor's reporter and Playwright: a copy it can read, or null for where they are installed. */
  modules: string | null;
}

export class SandboxError extends Error {}

function lookUpUser(name: string): { name: string; uid: number; gid: number } {
  const entry = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':'))
    .find((fields) => fields[0] === name);
  if (!entry) throw new SandboxError(`the user ${name} that runs suites does not exist (PROCTOR_RUNNER_USER)`);
  const uid = Number(entry[2]);
  if (uid === 0) throw new SandboxError(`PROCTOR_RUNNER_USER must not be root: suites are untrusted code`);
  return { name, uid, gid: Number(entry[3]) };
}

/** Fails with what to do when the runner cannot reach its folders (a parent not traversable by others). */
export function assertReachable(runner: Runner): void {
  if (!runner.user) return;
  const blocked = unreachableAncestor(runner.home);
  if (blocked) {
    throw new SandboxError(
      `suites run as ${runner.user.name}, who cannot reach ${runner.home}: ${blocked} is not traversable by others (chmod o+x it, or set PROCTOR_DATA_DIR elsewhere)`,
    );
  }
}

/** Gives `dir` and everything in it to the runner (no-op when suites run as the server's user). */
export async function handOver(runner: Runner, dir: string): Promise<void> {
  if (!runner.user) return;
  // A checkout may hold many files: chown walks them outside the event loop.
  await promisify(execFile)('chown', ['-R', '--no-dereference', `${runner.user.uid}:${runner.user.gid}`, dir]);
}

/**
 * The runner for a work root: its user (when the server is root), its home under the work root,
 * and Proctor's packages where it can read them.
 */
export function prepareRunner(workRoot: string, userName: string): Runner {
  const user = process.getuid?.() === 0 ? lookUpUser(userName) : null;
  fs.mkdirSync(workRoot, { recursive: true });
  // Traversable, not listable: the runner reaches its own folders here, and nothing else.
  fs.chmodSync(workRoot, 0o711);
  const home = path.join(workRoot, 'runner');
  fs.mkdirSync(path.join(home, 'tmp'), { recursive: true, mode: 0o700 });
  // Only the two folders: the npm cache below them is the runner's already, and may be large.
  if (user) for (const dir of [home, path.join(home, 'tmp')]) fs.chownSync(dir, user.uid, user.gid);
  return { user, home, modules: stageToolchain(workRoot, user !== null) };
}

/** Spawn options that run a child as the runner. */
export function runnerSpawnOptions(runner: Runner): { uid?: number; gid?: number } {
  return runner.user ? { uid: runner.user.uid, gid: runner.user.gid } : {};
}

/**
 * Of the server's environment, what a suite needs to find programs, speak the locale and reach the
 * network as the host does. Nothing else passes: not the server's settings, secrets or database.
 */
const PASSED_THROUGH =
  /^(PATH|LANG|LANGUAGE|LC_[A-Z]+|TZ|TERM|DISPLAY|PLAYWRIGHT_BROWSERS_PATH|SSL_CERT_FILE|SSL_CERT_DIR|NODE_EXTRA_CA_CERTS|(http|https|no|all)_proxy|(HTTP|HTTPS|NO|ALL)_PROXY)$/;

/** The clean environment every process of a suite starts from. */
export function runnerEnvironment(runner: Runner, base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(base).filter(([name]) => PASSED_THROUGH.test(name)));
  env.HOME = runner.home;
  env.TMPDIR = path.join(runner.home, 'tmp');
  env.npm_config_cache = path.join(runner.home, '.npm');
  if (runner.user) {
    env.USER = runner.user.name;
    env.LOGNAME = runner.user.name;
  }
  env.CI = '1';
  return env;
}
