import { execFile } from 'node:child_process';
import { ARTIFACT_MODES, type ArtifactMode } from '../api/wire.ts';
import { ciBuildUrl, ciPullRequest, ciRevision, ciRunKey } from '../runs/ci.ts';

export interface ProctorReporterOptions {
  url?: string;
  apiKey?: string;
  projectId?: number | string;
  environment?: string;
  /** Results per upload batch. */
  batchSize?: number;
  /** Longest a result waits before its batch is sent, in ms. */
  flushIntervalMs?: number;
  /** Attempts per request on network errors and 429/500/502/503/504. */
  maxAttempts?: number;
  /** Longest single wait between attempts, in ms. */
  maxBackoffMs?: number;
  /**
   * Seconds a job may lose to a server it cannot connect to (refused, unresolvable, unreachable)
   * before the reporter gives up the whole upload (default 10; PROCTOR_CONNECT_BUDGET_S).
   */
  connectBudgetS?: number;
  /** Attachments to upload: `failures` (every attempt of a failed or flaky test, the default), `all`, `none`. */
  artifacts?: ArtifactMode;
  /** Largest attachment uploaded, in MB (default 100); a larger one is refused in the summary line. */
  artifactLimitMb?: number;
  /** Longest the shard's end waits for attachments still uploading, in ms (default 120000). */
  artifactWaitMs?: number;
  /**
   * When every failed test of the invocation is snoozed in Proctor, Playwright's result becomes
   * passed (default true; PROCTOR_FORGIVE_SNOOZED=false turns it off).
   */
  forgiveSnoozed?: boolean;
  /**
   * Fail fast: the run stops once this many of its tests failed that no snooze covers, across all
   * its shards (PROCTOR_MAX_FAILURES; default: the environment's limit, if any).
   */
  maxFailures?: number;
  /**
   * How often, in ms, the reporter asks the run's state while its tests run, to stop them within
   * about that once the run is cancelled (by a person, or by fail fast in another shard); 0 asks
   * never, and a cancel is heard at the next upload only (default 1000; PROCTOR_CANCEL_CHECK_MS).
   */
  cancelCheckMs?: number;
}

export interface ReporterSettings {
  url: string;
  apiKey: string;
  projectId: string | null;
  environment: string | null;
  runId: number | null;
  shard: number | null;
  /**
   * PROCTOR_TOTAL_SHARDS: the run's shards when they are not Playwright's own (`proctor-ci order`'s
   * two phases report as shards 1 and 2 of one run); null: Playwright's `--shard`, else 1.
   */
  totalShards: number | null;
  runKey: string | null;
  commit: string | null;
  branch: string | null;
  buildUrl: string | null;
  pullRequest: number | null;
  batchSize: number;
  flushIntervalMs: number;
  maxAttempts: number;
  maxBackoffMs: number;
  connectBudgetMs: number;
  artifacts: ArtifactMode;
  artifactLimitBytes: number;
  artifactWaitMs: number;
  forgiveSnoozed: boolean;
  maxFailures: number | null;
  cancelCheckMs: number;
}

export type SettingsResult = { ok: true; settings: ReporterSettings } | { ok: false; reason: string };

function git(args: string[], cwd: string): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('git', args, { cwd, timeout: 5000 }, (error, stdout) => resolve(error ? null : stdout.trim() || null));
  });
}

/**
 * The commit and branch when no variable names them, from git in the project's folder; run in the
 * upload chain so that Playwright's start never waits for git.
 */
export async function resolveRevision(settings: ReporterSettings, cwd: string): Promise<void> {
  const [commit, branch] = await Promise.all([
    settings.commit ? settings.commit : git(['rev-parse', 'HEAD'], cwd),
    settings.branch ? settings.branch : git(['rev-parse', '--abbrev-ref', 'HEAD'], cwd),
  ]);
  settings.commit = commit;
  settings.branch = branch;
}

function isHttpUrl(text: string): boolean {
  try {
    const { protocol, hostname } = new URL(text);
    return (protocol === 'http:' || protocol === 'https:') && hostname !== '';
  } catch {
    return false;
  }
}

function positiveInteger(value: string | undefined): number | null {
  return value && /^[1-9]\d*$/.test(value) ? Number(value) : null;
}

/** Options win over the environment; `PROCTOR_RUN_ID` (set by Proctor's executor) reports into that run. */
export function resolveSettings(options: ProctorReporterOptions, env: NodeJS.ProcessEnv): SettingsResult {
  const url = (options.url ?? env.PROCTOR_URL ?? '').replace(/\/+$/, '');
  const apiKey = options.apiKey ?? env.PROCTOR_API_KEY ?? '';
  if (!url) return { ok: false, reason: 'no server URL: set the url option or PROCTOR_URL' };
  if (!isHttpUrl(url)) return { ok: false, reason: `the server URL ${JSON.stringify(url)} is not an http:// or https:// URL (the url option or PROCTOR_URL)` };
  if (!apiKey) return { ok: false, reason: 'no API key: set the apiKey option or PROCTOR_API_KEY' };
  const runId = positiveInteger(env.PROCTOR_RUN_ID);
  const environment = options.environment ?? env.PROCTOR_ENVIRONMENT ?? null;
  if (!runId && !environment) return { ok: false, reason: 'no environment: set the environment option or PROCTOR_ENVIRONMENT' };
  const artifacts = options.artifacts ?? env.PROCTOR_ARTIFACTS ?? 'failures';
  if (!(ARTIFACT_MODES as readonly string[]).includes(artifacts)) return { ok: false, reason: `PROCTOR_ARTIFACTS must be one of ${ARTIFACT_MODES.join(', ')}` };
  const artifactLimitMb = options.artifactLimitMb ?? (env.PROCTOR_ARTIFACT_LIMIT_MB ? Number(env.PROCTOR_ARTIFACT_LIMIT_MB) : 100);
  if (!(artifactLimitMb > 0)) return { ok: false, reason: 'PROCTOR_ARTIFACT_LIMIT_MB must be a positive number of MB' };
  const connectBudgetS = options.connectBudgetS ?? (env.PROCTOR_CONNECT_BUDGET_S ? Number(env.PROCTOR_CONNECT_BUDGET_S) : 10);
  if (!(connectBudgetS > 0)) return { ok: false, reason: 'PROCTOR_CONNECT_BUDGET_S must be a positive number of seconds' };
  const maxFailures = options.maxFailures ?? (env.PROCTOR_MAX_FAILURES ? positiveInteger(env.PROCTOR_MAX_FAILURES) : null);
  const maxFailuresGiven = options.maxFailures !== undefined || Boolean(env.PROCTOR_MAX_FAILURES);
  if (maxFailuresGiven && !(maxFailures !== null && Number.isInteger(maxFailures) && maxFailures >= 1))
    return { ok: false, reason: 'PROCTOR_MAX_FAILURES (the maxFailures option) must be a whole number of at least 1' };
  const cancelCheckMs = options.cancelCheckMs ?? (env.PROCTOR_CANCEL_CHECK_MS ? Number(env.PROCTOR_CANCEL_CHECK_MS) : 1000);
  if (!(Number.isInteger(cancelCheckMs) && cancelCheckMs >= 0))
    return { ok: false, reason: 'PROCTOR_CANCEL_CHECK_MS (the cancelCheckMs option) must be a whole number of ms, 0 to never ask' };
  const projectId = options.projectId ?? env.PROCTOR_PROJECT_ID;
  const runKey = ciRunKey(env);
  return {
    ok: true,
    settings: {
      url,
      apiKey,
      projectId: projectId === undefined || projectId === '' ? null : String(projectId),
      environment,
      runId,
      shard: positiveInteger(env.PROCTOR_SHARD),
      totalShards: positiveInteger(env.PROCTOR_TOTAL_SHARDS),
      runKey: runKey && environment ? `${environment}:${runKey}` : null,
      ...ciRevision(env),
      buildUrl: ciBuildUrl(env),
      pullRequest: ciPullRequest(env),
      batchSize: options.batchSize ?? 200,
      flushIntervalMs: options.flushIntervalMs ?? 1000,
      maxAttempts: options.maxAttempts ?? positiveInteger(env.PROCTOR_UPLOAD_MAX_ATTEMPTS) ?? 12,
      maxBackoffMs: options.maxBackoffMs ?? 8000,
      connectBudgetMs: connectBudgetS * 1000,
      artifacts: artifacts as ArtifactMode,
      artifactLimitBytes: Math.floor(artifactLimitMb * 1024 * 1024),
      artifactWaitMs: options.artifactWaitMs ?? 120_000,
      forgiveSnoozed: options.forgiveSnoozed ?? env.PROCTOR_FORGIVE_SNOOZED !== 'false',
      maxFailures,
      cancelCheckMs,
    },
  };
}
