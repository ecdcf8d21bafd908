import { setTimeout as sleep } from 'node:timers/promises';
import { attachmentsToFree, deleteRunAttachments, type Freed, removeQueuedBytes } from '../artifacts/index.ts';
import { deleteChangesBefore } from '../audit/index.ts';
import { DAY_MS } from '../context.ts';
import type { Sql } from '../db.ts';
import { countResults, deleteDetailsChunk, DETAILS_CHUNK, lockUnpinned, markArtifactsDeleted, markDetailsDeleted } from '../runs/index.ts';
import type { BlobStorage } from '../storage/blobs.ts';
import type { RetentionPolicy } from './schema.ts';
import { type Expiry, expiredRuns, getPolicy, projectIds } from './store.ts';
import { retentionResultsDeleted } from '../metrics.ts';

/** The least an audit trail keeps, whatever the policy. */
const AUDIT_DAYS = 365;

export interface RetentionDeps {
  sql: Sql;
  storage: BlobStorage;
  clock: () => Date;
  /** The server's policy, for projects without their own. */
  defaults: RetentionPolicy;
}

export interface PassOptions {
  /** One project's runs only; every project's when absent. */
  projectId?: number;
  /** Count what would go, delete nothing. */
  dryRun?: boolean;
  /**
   * After each chunk, a pause this many times as long as the chunk took: at 1, the pass takes at
   * most half of the database's time it could, and ingestion the rest.
   */
  pace?: number;
  /** Stops between two chunks (a server shutting down); what was done is whole. */
  signal?: AbortSignal;
}

/** What a pass deleted (or, dry, would delete) in one project. */
export interface ProjectReport {
  project_id: number;
  policy: RetentionPolicy;
  /** Runs whose results went; their attachments went with them. */
  runs: number;
  results: number;
  /** Runs that kept their results and lost their attachments. */
  artifact_runs: number;
  attachments: number;
  /** Stored blobs no attachment holds any more, and their size. */
  files: number;
  bytes: number;
}

/** Runs taken per query: each is done whole before the next is looked for. */
const RUNS_PER_QUERY = 50;
export const DEFAULT_PACE = 1;

/**
 * Deletes what each project's policy has expired, run by run, oldest first: the results, listed
 * tests and attachments of runs past `results_days`, the attachments of runs past
 * `artifacts_days`; pinned runs and every rollup stay. Bytes are removed from the storage after
 * the rows that held them, through a queue that a pass killed midway leaves for the next one.
 */
export async function runRetentionPass(deps: RetentionDeps, options: PassOptions = {}): Promise<ProjectReport[]> {
  if (!options.dryRun) await removeQueuedBytes(deps.sql, deps.storage);
  const projects = options.projectId === undefined ? await projectIds(deps.sql) : [options.projectId];
  const reports: ProjectReport[] = [];
  for (const projectId of projects) {
    if (options.signal?.aborted) break;
    const policy = await getPolicy(deps.sql, projectId, deps.defaults);
    const now = deps.clock();
    const cutoffs = { details: new Date(now.getTime() - policy.results_days * DAY_MS), artifacts: new Date(now.getTime() - policy.artifacts_days * DAY_MS) };
    reports.push(options.dryRun ? await countExpired(deps.sql, projectId, policy, cutoffs) : await deleteExpired(deps, projectId, policy, cutoffs, options));
    // The audit trail is kept as long as the results, and a year at least.
    if (!options.dryRun) await deleteChangesBefore(deps.sql, projectId, new Date(now.getTime() - Math.max(AUDIT_DAYS, policy.results_days) * DAY_MS));
  }
  return reports;
}

type Cutoffs = Record<Expiry, Date>;

const emptyReport = (projectId: number, policy: RetentionPolicy): ProjectReport => ({
  project_id: projectId,
  policy,
  runs: 0,
  results: 0,
  artifact_runs: 0,
  attachments: 0,
  files: 0,
  bytes: 0,
});

function addFreed(report: ProjectReport, freed: Freed): void {
  report.attachments += freed.attachments;
  report.files += freed.files;
  report.bytes += freed.bytes;
}

async function countExpired(sql: Sql, projectId: number, policy: RetentionPolicy, cutoffs: Cutoffs): Promise<ProjectReport> {
  const report = emptyReport(projectId, policy);
  const detailRuns = await expiredRuns(sql, projectId, 'details', cutoffs.details, Number.MAX_SAFE_INTEGER);
  const losingDetails = new Set(detailRuns);
  const artifactRuns = (await expiredRuns(sql, projectId, 'artifacts', cutoffs.artifacts, Number.MAX_SAFE_INTEGER)).filter((id) => !losingDetails.has(id));
  report.runs = detailRuns.length;
  report.results = detailRuns.length > 0 ? await countResults(sql, detailRuns) : 0;
  report.artifact_runs = artifactRuns.length;
  addFreed(report, await attachmentsToFree(sql, [...detailRuns, ...artifactRuns]));
  return report;
}

async function deleteExpired(deps: RetentionDeps, projectId: number, policy: RetentionPolicy, cutoffs: Cutoffs, options: PassOptions): Promise<ProjectReport> {
  const report = emptyReport(projectId, policy);
  const pace = options.pace ?? DEFAULT_PACE;
  for (const expiry of ['details', 'artifacts'] as const) {
    for (;;) {
      const runs = await expiredRuns(deps.sql, projectId, expiry, cutoffs[expiry], RUNS_PER_QUERY);
      for (const runId of runs) {
        if (options.signal?.aborted) return report;
        if (expiry === 'details') await deleteDetails(deps, runId, report, pace, options.signal);
        else await deleteArtifacts(deps, runId, report);
        await removeQueuedBytes(deps.sql, deps.storage);
      }
      if (runs.length < RUNS_PER_QUERY) break;
    }
  }
  return report;
}

/**
 * A run's results and listed tests go chunk by chunk, each chunk a short transaction of its own;
 * the last one takes its attachments and marks it. Killed midway, the run is still unmarked, and
 * the next pass finishes it. A pin taken meanwhile stops it: what is left stays.
 */
async function deleteDetails(deps: RetentionDeps, runId: number, report: ProjectReport, pace: number, signal: AbortSignal | undefined): Promise<void> {
  for (;;) {
    const started = performance.now();
    const step = await deps.sql.begin(async (tx) => {
      if (!(await lockUnpinned(tx, runId, 'details'))) return { done: true, results: 0, freed: null };
      const chunk = await deleteDetailsChunk(tx, runId);
      if (chunk.results === DETAILS_CHUNK || chunk.tests === DETAILS_CHUNK) return { done: false, results: chunk.results, freed: null };
      const freed = await deleteRunAttachments(tx, runId, deps.clock(), deps.storage);
      await markDetailsDeleted(tx, runId, deps.clock());
      return { done: true, results: chunk.results, freed };
    });
    report.results += step.results;
    retentionResultsDeleted.inc(step.results);
    if (step.freed) {
      addFreed(report, step.freed);
      report.runs += 1;
    }
    if (step.done) return;
    if (pace > 0) await sleep((performance.now() - started) * pace, undefined, { signal }).catch(() => undefined);
    if (signal?.aborted) return;
  }
}

async function deleteArtifacts(deps: RetentionDeps, runId: number, report: ProjectReport): Promise<void> {
  const freed = await deps.sql.begin(async (tx) => {
    if (!(await lockUnpinned(tx, runId, 'artifacts'))) return null;
    const gone = await deleteRunAttachments(tx, runId, deps.clock(), deps.storage);
    await markArtifactsDeleted(tx, runId, deps.clock());
    return gone;
  });
  if (!freed) return;
  addFreed(report, freed);
  report.artifact_runs += 1;
}

/** One line per project for the command line and the log: what went, or would go. */
export function describeReport(report: ProjectReport, dryRun: boolean): string {
  const verb = dryRun ? 'would delete' : 'deleted';
  const { results_days: resultsDays, artifacts_days: artifactsDays } = report.policy;
  return (
    `project ${report.project_id} (results ${resultsDays} days, attachments ${artifactsDays} days): ${verb} ` +
    `the results of ${report.runs} runs (${report.results} results) and the attachments of ${report.artifact_runs} more runs; ` +
    `${report.attachments} attachments, ${report.files} files, ${report.bytes} bytes`
  );
}
