import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { type Runner, runnerEnvironment, runnerSpawnOptions } from './sandbox.ts';

const run = promisify(execFile);

export class RepositoryError extends Error {}

/** A test repository's branches as `git ls-remote` lists them. */
export interface Branches {
  defaultBranch: string | null;
  branches: Set<string>;
}

/**
 * A bounded look at a project's test repository, all a request may take of it (no checkout):
 * `folder` for a local folder, which has no branches; null when it cannot be read now.
 */
export type BranchLookup = (repoUrl: string) => Promise<{ kind: 'folder' } | { kind: 'git'; found: Branches } | null>;

async function git(args: string[], cwd?: string, timeoutMs = 120_000): Promise<string> {
  try {
    const { stdout } = await run('git', args, { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
    return stdout.trim();
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? (error as Error).message).trim();
    throw new RepositoryError(`git ${args[0]} failed: ${stderr.split('\n').slice(-3).join(' ')}`);
  }
}

/**
 * A project's test repository: a git URL or a local git repository (branches, cached clone), or a
 * local folder that is not a repository root (run where it is, on no branch).
 */
export type Repository = { kind: 'git'; source: string } | { kind: 'folder'; path: string };

export async function resolveRepository(repoUrl: string): Promise<Repository> {
  const isLocal = repoUrl.startsWith('/') || repoUrl.startsWith('.') || repoUrl.startsWith('file://');
  if (!isLocal) return { kind: 'git', source: repoUrl };
  const local = path.resolve(repoUrl.replace(/^file:\/\//, ''));
  if (!fs.existsSync(local)) throw new RepositoryError(`the repository ${local} does not exist`);
  const top = await git(['rev-parse', '--show-toplevel'], local).catch(() => null);
  return top && path.resolve(top) === fs.realpathSync(local) ? { kind: 'git', source: local } : { kind: 'folder', path: local };
}

export async function listBranches(repository: Repository, timeoutMs?: number): Promise<Branches> {
  if (repository.kind === 'folder') return { defaultBranch: null, branches: new Set() };
  const output = await git(['ls-remote', '--symref', repository.source, 'HEAD', 'refs/heads/*'], undefined, timeoutMs);
  const branches = new Set<string>();
  let defaultBranch: string | null = null;
  for (const line of output.split('\n')) {
    const symref = /^ref: refs\/heads\/(\S+)\s+HEAD$/.exec(line);
    if (symref) defaultBranch = symref[1] as string;
    const head = /^[0-9a-f]+\s+refs\/heads\/(\S+)$/.exec(line);
    if (head) branches.add(head[1] as string);
  }
  return { defaultBranch: defaultBranch ?? (branches.has('main') ? 'main' : branches.has('master') ? 'master' : null), branches };
}

/** How long a request may look at a repository's branches before it leaves them to the executor. */
const REQUEST_LOOKUP_TIMEOUT_MS = 10_000;

/**
 * The branches a request may consult (`git ls-remote`, bounded; no checkout): null when the
 * repository cannot be read now, so that the executor resolves the branch and reports the reason.
 */
export const lookUpBranches: BranchLookup = async (repoUrl) => {
  try {
    const repository = await resolveRepository(repoUrl);
    if (repository.kind === 'folder') return { kind: 'folder' };
    return { kind: 'git', found: await listBranches(repository, REQUEST_LOOKUP_TIMEOUT_MS) };
  } catch (error) {
    if (error instanceof RepositoryError) return null;
    throw error;
  }
};

/** One refresh of a cache at a time in this process (a data directory has one server: its lock). */
const cacheLocks = new Map<string, Promise<void>>();

/** One refresh of a cache at a time: in this process, and across processes sharing a work folder (agents on one machine). */
async function withLock(key: string, work: () => Promise<void>): Promise<void> {
  const previous = cacheLocks.get(key) ?? Promise.resolve();
  const locked = () => withFileLock(`${key}.lock`, work);
  const current = previous.then(locked, locked);
  cacheLocks.set(
    key,
    current.catch(() => undefined),
  );
  await current;
}

/** A lock that lasts longer than any fetch is left by a process that died holding it. */
const STALE_LOCK_MS = 10 * 60_000;

async function withFileLock(file: string, work: () => Promise<void>): Promise<void> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  for (;;) {
    try {
      fs.closeSync(fs.openSync(file, 'wx'));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = Date.now() - (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) fs.rmSync(file, { force: true });
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    await work();
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** The bare clone appears whole (cloned aside, then renamed into place) or is fetched. */
async function refreshCache(source: string, cache: string): Promise<void> {
  if (fs.existsSync(cache)) {
    await git(['fetch', '--quiet', '--prune', 'origin', '+refs/heads/*:refs/heads/*'], cache);
    return;
  }
  fs.mkdirSync(path.dirname(cache), { recursive: true });
  const partial = `${cache}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  await git(['clone', '--bare', '--quiet', source, partial]);
  fs.renameSync(partial, cache);
}

export interface Checkout {
  dir: string;
  headSha: string | null;
}

/** The branch checked out in `dir`; null when its HEAD is detached or it is no git checkout. */
export async function currentBranch(dir: string): Promise<string | null> {
  const name = await git(['rev-parse', '--abbrev-ref', 'HEAD'], dir).catch(() => null);
  return name && name !== 'HEAD' ? name : null;
}

/**
 * The repository at a branch (at `commit` of it when given: the one a run's agents share), in a
 * folder of its own: a cached bare clone per repository, fetched and checked out into the run's
 * folder (`runs/<folder>` under the work root). A plain folder is used where it is.
 */
export async function checkout(
  repository: Repository,
  branch: string | null,
  workRoot: string,
  folder: string,
  commit: string | null = null,
): Promise<Checkout> {
  if (repository.kind === 'folder') {
    const headSha = await git(['rev-parse', 'HEAD'], repository.path).catch(() => null);
    return { dir: repository.path, headSha };
  }
  const cache = path.join(workRoot, 'repos', `${createHash('sha256').update(repository.source).digest('hex').slice(0, 16)}.git`);
  await withLock(cache, () => refreshCache(repository.source, cache));
  const dir = path.join(workRoot, 'runs', folder);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  await git(['clone', '--quiet', '--shared', ...(branch ? ['--branch', branch] : []), cache, dir]);
  if (commit) await git(['-c', 'advice.detachedHead=false', 'checkout', '--quiet', '--detach', commit], dir);
  return { dir, headSha: await git(['rev-parse', 'HEAD'], dir) };
}

function declaredDependencies(dir: string): string[] {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
  return Object.keys({ ...manifest.dependencies, ...manifest.devDependencies });
}

/**
 * Whether `name` is installed for `dir`, by what is on disk: its folder in a node_modules of `dir` or
 * of a parent (npm, yarn classic, pnpm's links), as Node would find it. Not require.resolve of its
 * package.json, which a package whose `exports` leave it out refuses.
 */
function installedOnDisk(dir: string, name: string): boolean {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    if (fs.existsSync(path.join(at, 'node_modules', name, 'package.json'))) return true;
    if (path.dirname(at) === at) return false;
  }
}

/** Yarn's Plug'n'Play map of `dir` or a parent: with it, packages live in yarn's cache, not in node_modules. */
function pnpFile(dir: string): string | null {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    const file = path.join(at, '.pnp.cjs');
    if (fs.existsSync(file)) return file;
    if (path.dirname(at) === at) return null;
  }
}

export type PackageManager = 'npm' | 'yarn' | 'pnpm';

/** The package manager a folder's lockfile names (npm when none does). */
export function packageManagerOf(dir: string): PackageManager {
  if (fs.existsSync(path.join(dir, 'pnpm-lock.yaml'))) return 'pnpm';
  if (fs.existsSync(path.join(dir, 'yarn.lock'))) return 'yarn';
  return 'npm';
}

/** The declared dependencies of `dir` not installed on disk; none under Yarn's Plug'n'Play, which installed them all or made no map. */
export function missingDependencies(dir: string): string[] {
  if (!fs.existsSync(path.join(dir, 'package.json')) || pnpFile(dir)) return [];
  return declaredDependencies(dir).filter((name) => !installedOnDisk(dir, name));
}

/**
 * A workspace given to use as it is (a CI job's): its dependencies must be installed already. It is
 * never written to, unless `install` (the agent's --install) asks for its package manager's install.
 */
export async function useWorkspace(dir: string, log: (line: string) => void, options: { install: boolean; runner: Runner }): Promise<void> {
  const missing = missingDependencies(dir);
  if (missing.length === 0) return;
  const manager = packageManagerOf(dir);
  if (!options.install)
    throw new RepositoryError(
      `the workspace's dependencies are not installed (missing: ${missing.join(', ')}): install them before the agent starts (${manager} install), or pass --install`,
    );
  const command = { npm: ['npm', 'install', '--no-audit', '--no-fund'], yarn: ['yarn', 'install'], pnpm: ['pnpm', 'install'] }[manager];
  log(`installing the workspace's dependencies (${command.join(' ')}), as --install asks`);
  try {
    await installAsRunner(command, dir, options.runner);
  } catch (error) {
    throw new RepositoryError(`installing the workspace's dependencies (${command.join(' ')}) failed: ${failureText(error)}`);
  }
}

/** A package manager's install in `dir`, as the runner (install scripts are the suite's code), for at most 10 minutes. */
async function installAsRunner(command: string[], dir: string, runner: Runner): Promise<void> {
  await run(command[0] as string, command.slice(1), {
    ...runnerSpawnOptions(runner),
    env: runnerEnvironment(runner, process.env),
    cwd: dir,
    timeout: 10 * 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** A command's failure in full (its stderr, else its message), only its start cut when very long. */
function failureText(error: unknown): string {
  const text = String((error as { stderr?: string }).stderr || (error as Error).message || error).trim();
  return text.length > 8000 ? `…${text.slice(-8000)}` : text;
}

function dependencyHash(dir: string): string | null {
  const files = ['package.json', 'package-lock.json', 'npm-shrinkwrap.json'].map((name) => path.join(dir, name)).filter((file) => fs.existsSync(file));
  if (!files.some((file) => file.endsWith('package.json'))) return null;
  const hash = createHash('sha256');
  for (const file of files) hash.update(fs.readFileSync(file));
  return hash.digest('hex');
}

/**
 * Installs the repository's dependencies when they are missing or its package files changed
 * (npm, from the local cache where it can, as the runner: install scripts are the suite's code).
 * `ownFolder`: the user's folder, run in place. Returns whether it installed.
 */
export async function installDependencies(
  dir: string,
  log: (line: string) => void,
  options: { ownFolder: boolean; runner: Runner; cacheRoot?: string },
): Promise<boolean> {
  const wanted = dependencyHash(dir);
  if (!wanted) return false;
  const marker = path.join(dir, 'node_modules', '.proctor-dependencies');
  if (fs.existsSync(marker) && fs.readFileSync(marker, 'utf8') === wanted) return false;
  // A folder whose dependencies already resolve (its own node_modules, or a parent's) is ready.
  if (options.ownFolder && !fs.existsSync(marker) && missingDependencies(dir).length === 0) return false;
  // A checkout of ours shares node_modules with every checkout of the same package files.
  const cached = !options.ownFolder && options.cacheRoot ? path.join(options.cacheRoot, wanted.slice(0, 32), 'node_modules') : null;
  if (cached && fs.existsSync(path.join(cached, '.proctor-dependencies'))) {
    fs.rmSync(path.join(dir, 'node_modules'), { recursive: true, force: true });
    fs.symlinkSync(cached, path.join(dir, 'node_modules'), 'dir');
    return false;
  }
  const hasLock = fs.existsSync(path.join(dir, 'package-lock.json')) || fs.existsSync(path.join(dir, 'npm-shrinkwrap.json'));
  log(`installing dependencies (npm ${hasLock ? 'ci' : 'install'})`);
  try {
    // In a user's own folder nothing but node_modules may change: no lockfile is written there.
    const lockfile = hasLock || !options.ownFolder ? [] : ['--no-package-lock'];
    await installAsRunner(
      ['npm', hasLock ? 'ci' : 'install', ...lockfile, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'],
      dir,
      options.runner,
    );
  } catch (error) {
    throw new RepositoryError(`installing dependencies failed: ${failureText(error)}`);
  }
  fs.writeFileSync(marker, wanted);
  if (cached) {
    fs.mkdirSync(path.dirname(cached), { recursive: true });
    try {
      fs.renameSync(path.join(dir, 'node_modules'), cached);
    } catch {
      // another run cached the same dependencies first: ours stay in the checkout
      return true;
    }
    fs.symlinkSync(cached, path.join(dir, 'node_modules'), 'dir');
  }
  return true;
}

/** `.env*` files at the repository's root. */
export function findEnvFiles(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((name) => /^\.env(\..+)?$/.test(name) && fs.statSync(path.join(dir, name)).isFile())
    .sort();
}

/** KEY=value lines; quotes removed, comments and blank lines skipped. */
export function parseEnvFile(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match) continue;
    let value = (match[2] as string).trim();
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) value = value.slice(1, -1);
    else value = value.replace(/\s+#.*$/, '');
    values[match[1] as string] = value;
  }
  return values;
}
