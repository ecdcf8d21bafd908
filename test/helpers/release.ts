import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { EXAMPLES, ROOT } from './playwright.ts';
import { type ServerProcess, serverProcess } from './process.ts';

const run = promisify(execFile);

export interface Packed {
  badge: string;
  reporter: string;
  server: string;
  /** One line per tarball: its name, packed and unpacked sizes, file count. */
  sizes: string[];
}

/**
 * The three packages packed from this repository into `into`. Their prepack builds what `npm ci`'s
 * prepare has built already; it is skipped so that no other test file sees `dist` rewritten under it.
 */
export async function packPackages(into: string): Promise<Packed> {
  const { stdout } = await run(
    'npm',
    ['pack', '--ignore-scripts', '-w', '@proctor/badge', '-w', '@proctor/reporter', '-w', '@proctor/server', '--json', '--pack-destination', into],
    {
      cwd: ROOT,
    },
  );
  const packed = JSON.parse(stdout) as { name: string; filename: string; size: number; unpackedSize: number; files: unknown[] }[];
  const tarball = (name: string) => {
    const entry = packed.find((p) => p.name === name);
    if (!entry) throw new Error(`npm pack did not pack ${name}`);
    return path.join(into, path.basename(entry.filename));
  };
  return {
    badge: tarball('@proctor/badge'),
    reporter: tarball('@proctor/reporter'),
    server: tarball('@proctor/server'),
    sizes: packed.map(
      (p) =>
        `${path.basename(p.filename)}: ${(p.size / 1024).toFixed(1)} kB packed, ${(p.unpackedSize / 1024).toFixed(1)} kB unpacked, ${p.files.length} files`,
    ),
  };
}

/** The server's environment for a test: quiet, one HTTP process, none of this process's database settings. */
function serverEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, LOG_LEVEL: 'warn', PROCTOR_HTTP_WORKERS: '1', PROCTOR_CHECK_RESPONSES: 'true', DATABASE_URL: '', ...env };
}

/**
 * `proctor <args>` as a user starts it from the tarballs: `npx` in `cwd`, in a process group of its
 * own so that a signal reaches the server behind npm. The reporter's and the badge's tarballs go along
 * because the server depends on a reporter and a badge renderer that are not on the registry yet.
 */
export function npxProctor(packed: Packed, args: string[], cwd: string, env: Record<string, string> = {}): ServerProcess {
  return serverProcess(
    spawn('npx', ['--yes', '-p', packed.badge, '-p', packed.reporter, '-p', packed.server, 'proctor', ...args], { cwd, env: serverEnv(env), detached: true }),
  );
}

/** `proctor <args>` from a folder where the tarballs were installed with npm. */
export function installedProctor(folder: string, args: string[], env: Record<string, string> = {}): ServerProcess {
  return serverProcess(spawn(path.join(folder, 'node_modules/.bin/proctor'), args, { cwd: folder, env: serverEnv(env), detached: true }));
}

/** Ends a process started above and everything in its group, and waits for it. */
export async function stopGroup(server: ServerProcess | undefined): Promise<void> {
  if (!server || server.child.exitCode !== null) return;
  try {
    process.kill(-(server.child.pid as number), 'SIGTERM');
  } catch {
    // already gone
  }
  await server.exited;
}

/** The demo key a first start prints. */
export async function printedKey(server: ServerProcess, timeoutMs = 120_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const key = /prc_p_[0-9a-f]{12}_[0-9a-f]{48}/.exec(server.output())?.[0];
    if (key) return key;
    if (server.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no key printed:\n${server.output()}`);
}

/**
 * npx keeps what it installed in npm's cache, keyed by the specs: the entries whose manifest `holds`
 * (a check's scratch folder, a package name) go, so that a later check installs afresh.
 */
export async function removeNpxInstalls(holds: (manifest: string) => boolean): Promise<void> {
  const cache = (await run('npm', ['config', 'get', 'cache'])).stdout.trim();
  const npxDir = path.join(cache, '_npx');
  for (const entry of fs.existsSync(npxDir) ? fs.readdirSync(npxDir) : []) {
    const manifest = path.join(npxDir, entry, 'package.json');
    if (fs.existsSync(manifest) && holds(fs.readFileSync(manifest, 'utf8'))) fs.rmSync(path.join(npxDir, entry), { recursive: true, force: true });
  }
}

interface UsersProjectOptions {
  env?: NodeJS.ProcessEnv;
  /** Called on the folder before npm installs: to name a registry in its .npmrc, say. */
  prepare?: (project: string) => void;
  npmFlags?: string[];
  timeoutMs: number;
}

/** A user's Playwright project at `project`: a copy of examples/ outside the repository with `devDependencies`, installed by npm. */
export async function usersProject(project: string, devDependencies: Record<string, string>, options: UsersProjectOptions): Promise<string> {
  fs.mkdirSync(project);
  for (const entry of ['tests', 'site', 'playwright.config.ts']) fs.cpSync(path.join(EXAMPLES, entry), path.join(project, entry), { recursive: true });
  fs.writeFileSync(
    path.join(project, 'package.json'),
    `${JSON.stringify({ name: 'a-users-suite', private: true, type: 'module', devDependencies }, null, 2)}\n`,
  );
  options.prepare?.(project);
  await run('npm', ['install', '--no-audit', '--no-fund', ...(options.npmFlags ?? [])], { cwd: project, env: options.env, timeout: options.timeoutMs });
  return project;
}

/** Each command of the command-line reference (docs/cli.md): its words before the first flag. */
export function documentedCommands(): string[] {
  const reference = fs.readFileSync(path.join(ROOT, 'docs', 'cli.md'), 'utf8');
  return [...reference.matchAll(/^\| `([a-z][a-z ]*?)(?: --[^`]*)?`/gm)].map((match) => (match[1] as string).trim());
}
