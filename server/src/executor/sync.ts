import fs from 'node:fs';
import path from 'node:path';
import type { Sql } from '../db.ts';
import { deactivateUnlisted, upsertTestCases } from '../testcases/store.ts';
import { listTests } from './playwright.ts';
import { checkout, findEnvFiles, installDependencies, listBranches, resolveRepository } from './repository.ts';
import { assertReachable, handOver, prepareRunner, runnerEnvironment } from './sandbox.ts';

export interface SyncResult {
  runnerProjects: string[];
  envFiles: string[];
  testCount: number;
}

/** Syncs under way in this process, by environment: a second request waits on the first's job. */
const syncsUnderWay = new Map<number, Promise<SyncResult>>();

/**
 * One sync job per environment at a time in this process, shared by every request that asks for it
 * meanwhile; each job has a folder of its own, so jobs of two processes never share a checkout.
 */
export function syncEnvironmentShared(...args: Parameters<typeof syncEnvironment>): Promise<SyncResult> {
  const environmentId = args[1].environmentId;
  const underWay = syncsUnderWay.get(environmentId);
  if (underWay) return underWay;
  const job = syncEnvironment(...args).finally(() => syncsUnderWay.delete(environmentId));
  syncsUnderWay.set(environmentId, job);
  return job;
}

/**
 * Reads the test repository at its default branch: its runner projects and `.env*` files into the
 * environment, its tests into the project's inventory (tests it no longer has become inactive).
 */
export async function syncEnvironment(
  sql: Sql,
  target: { projectId: number; environmentId: number; repoUrl: string },
  work: { root: string; runnerUser: string },
  now: Date,
): Promise<SyncResult> {
  const runner = prepareRunner(work.root, work.runnerUser);
  assertReachable(runner);
  const repository = await resolveRepository(target.repoUrl);
  const branch = repository.kind === 'git' ? (await listBranches(repository)).defaultBranch : null;
  // A checkout folder of the sync's own, apart from any run's.
  const syncRoot = path.join(work.root, 'sync', `${target.environmentId}-${process.pid}`);
  const { dir, headSha } = await checkout(repository, branch, syncRoot, 0);
  try {
    if (repository.kind === 'git') await handOver(runner, dir);
    await installDependencies(dir, () => undefined, { ownFolder: repository.kind === 'folder', runner });
    const listing = await listTests(dir, runnerEnvironment(runner, process.env), runner);
    const envFiles = findEnvFiles(dir);
    await sql.begin(async (tx) => {
      await tx`
        update environments set runner_projects = ${listing.projects}, env_files = ${envFiles}, updated_at = ${now}
        where id = ${target.environmentId}`;
      const tests = listing.tests.map((t) => ({
        id: t.id,
        title: t.title,
        file_path: t.file_path,
        suites: t.suites,
        runner_project: t.project,
        tags: t.tags,
        line: t.line,
        column: t.column,
      }));
      await upsertTestCases(tx, target.projectId, tests, headSha, now);
      await deactivateUnlisted(tx, target.projectId, listing.projects, tests.map((t) => t.id), now);
    });
    return { runnerProjects: listing.projects, envFiles, testCount: listing.tests.length };
  } finally {
    if (repository.kind === 'git') fs.rmSync(dir, { recursive: true, force: true });
  }
}
