import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Committed, FilesToCommit } from '../notifications/index.ts';

// Approved baselines pushed to the project's own test repository (the one Proctor checks out for
// the runs it triggers): the branch cloned alone and shallow into a folder of its own, the files
// written, one commit, pushed without force. A branch that moved meanwhile refuses the push; the
// job's next attempt starts from its new head.

const run = promisify(execFile);
const AUTHOR = ['-c', 'user.name=Proctor', '-c', 'user.email=proctor@localhost', '-c', 'commit.gpgsign=false'];

async function git(args: string[], cwd?: string): Promise<string> {
  const { stdout } = await run('git', args, { cwd, timeout: 120_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
  return stdout.trim();
}

/** Where a local repository is cloned from with `--depth` (a plain path would ignore it). */
function cloneSource(repoUrl: string): string {
  return repoUrl.startsWith('/') ? `file://${repoUrl}` : repoUrl;
}

/** The repository's default branch, as its HEAD names it; null when it names none. */
async function defaultBranchOf(repoUrl: string): Promise<string | null> {
  const output = await git(['ls-remote', '--symref', repoUrl, 'HEAD']);
  return /^ref: refs\/heads\/(\S+)\s+HEAD$/m.exec(output)?.[1] ?? null;
}

/**
 * Where to push for a project's repository URL: a remote URL as it is; a local path when it is a
 * repository's root or a bare repository; null for a plain folder (no branches to push to).
 */
export async function gitSourceOf(repoUrl: string): Promise<string | null> {
  if (!(repoUrl.startsWith('/') || repoUrl.startsWith('.') || repoUrl.startsWith('file://'))) return repoUrl;
  const local = path.resolve(repoUrl.replace(/^file:\/\//, ''));
  if (!fs.existsSync(local)) return null;
  const bare = await git(['rev-parse', '--is-bare-repository'], local).catch(() => null);
  if (bare === 'true') return local;
  const top = await git(['rev-parse', '--show-toplevel'], local).catch(() => null);
  return top && path.resolve(top) === fs.realpathSync(local) ? local : null;
}

export async function pushToRepository(repoUrl: string, commit: FilesToCommit): Promise<Committed> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-baselines-'));
  try {
    if ((await defaultBranchOf(repoUrl)) === commit.branch && !commit.allowDefaultBranch)
      return {
        kind: 'refused',
        reason: `${commit.branch} is the repository's default branch: the project does not allow baselines to be committed there (baselines_to_default_branch)`,
      };
    const remote = await git(['ls-remote', '--heads', repoUrl, `refs/heads/${commit.branch}`]);
    if (remote === '') return { kind: 'refused', reason: `the repository has no branch ${commit.branch}` };
    await git(['clone', '--quiet', '--depth', '1', '--single-branch', '--branch', commit.branch, cloneSource(repoUrl), dir]);
    for (const file of commit.files) {
      const target = path.join(dir, ...file.path.split('/'));
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, file.content);
    }
    await git(['add', '--', ...commit.files.map((file) => file.path)], dir);
    await git([...AUTHOR, 'commit', '--quiet', '--allow-empty', '-m', commit.message], dir);
    const sha = await git(['rev-parse', 'HEAD'], dir);
    await git(['push', '--quiet', 'origin', `HEAD:refs/heads/${commit.branch}`], dir);
    return { kind: 'committed', sha, url: null };
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? (error as Error).message).trim();
    return { kind: 'failed', error: `git: ${stderr.split('\n').slice(-2).join(' ')}`.slice(0, 500) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Which of `commits` have `ancestor` in their history (itself included), as the branch of the
 * project's repository holds them: the branch cloned alone, bare and without file contents, into a
 * folder of its own. A commit the branch does not hold does not descend; null when the repository
 * cannot be read (not a git repository, gone, refused).
 */
export async function descendantsOf(repoUrl: string, branch: string, ancestor: string, commits: string[]): Promise<Set<string> | null> {
  const source = await gitSourceOf(repoUrl);
  if (source === null) return null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-history-'));
  try {
    await git(['clone', '--quiet', '--bare', '--filter=blob:none', '--single-branch', '--branch', branch, cloneSource(source), dir]);
    const found = new Set<string>();
    for (const commit of new Set(commits)) {
      // Exit 0: an ancestor; 1: not one; anything else (a commit the branch does not hold): not one either.
      const descends = await run('git', ['merge-base', '--is-ancestor', ancestor, commit], { cwd: dir, timeout: 60_000 }).then(
        () => true,
        () => false,
      );
      if (descends) found.add(commit);
    }
    return found;
  } catch {
    return null;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
