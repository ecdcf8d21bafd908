import { parseArgs } from 'node:util';
import { ciBuildUrl, ciPullRequest, ciRevision } from '../runs/ci.ts';
import type { TriggerBody } from '../runs/client.ts';
import { UsageError } from './exit.ts';

export const RUN_USAGE = `usage: proctor-ci run --environment SLUG [--branch B] [--commit SHA] [--env NAME=VALUE]... [--tag T]...
                      [--shards N] [--rerun RUN_ID [--failed-only]] [--timeout MINUTES] [--poll SECONDS]
                      [--max-failures N] [--affected] [--fail-on-flaky] [--no-notifications] [--json]
  Triggers a run of the environment's suite and waits for its end: a line per change of state, then the
  run's summary (--json: one JSON document on stdout). Exit code: 0 passed, 1 failed, 2 error or
  cancelled, 3 Proctor could not be reached. SIGINT or SIGTERM cancels the run.
  --max-failures N: fail fast, the run is cancelled once N tests failed that no snooze or quarantine covers
  (its shards and agents stop, the summary names the failures, exit code 1); default: the environment's.
  --affected: only the tests Playwright finds affected by the changes since the environment's last passing
  run on the branch, plus those that failed or were flaky since; every test when that cannot be told (the
  run says why, and how many tests it left out).
  From the environment: PROCTOR_URL, PROCTOR_API_KEY, PROCTOR_PROJECT_ID (a personal key), and
  PROCTOR_CONNECT_BUDGET_S (how long to try a server that cannot be reached, default 30).
  Branch, commit and build URL default to the CI's own (GitHub Actions, GitLab CI, Jenkins, CircleCI,
  Buildkite, Azure Pipelines, Bitbucket Pipelines).`;

export interface RunSettings {
  url: string;
  apiKey: string;
  projectId: string | null;
  body: TriggerBody;
  timeoutMs: number;
  pollMs: number;
  connectBudgetMs: number;
  failOnFlaky: boolean;
  json: boolean;
}

function positive(raw: string | undefined, flag: string, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new UsageError(`${flag} must be a positive number, not "${raw}"`);
  return value;
}

function wholeNumber(raw: string | undefined, flag: string, max: number): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(raw) || Number(raw) > max) throw new UsageError(`${flag} must be a whole number from 1 to ${max}, not "${raw}"`);
  return Number(raw);
}

function overrides(pairs: string[]): { name: string; value: string }[] {
  return pairs.map((pair) => {
    const at = pair.indexOf('=');
    const name = at > 0 ? pair.slice(0, at) : '';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new UsageError(`--env "${pair.split('=')[0]}" is not NAME=VALUE`);
    return { name, value: pair.slice(at + 1) };
  });
}

/**
 * The build the run is for: the flags first, then what the CI says of itself. Not the CI's page:
 * a build's `url` is the deployment the suite tests (its BASE_URL).
 */
function build(values: { branch?: string; commit?: string }, env: NodeJS.ProcessEnv): TriggerBody['build'] {
  const detected = ciRevision(env);
  const fields = { branch: values.branch ?? detected.branch, commit: values.commit ?? detected.commit };
  const given = Object.fromEntries(Object.entries(fields).filter(([, value]) => value)) as TriggerBody['build'] & object;
  return Object.keys(given).length > 0 ? given : undefined;
}

/** The CI job that asked for the run, kept with it: its page and its pull or merge request. */
function ciMetadata(env: NodeJS.ProcessEnv): TriggerBody['metadata'] {
  const page = ciBuildUrl(env);
  const request = ciPullRequest(env);
  const metadata = { ...(page ? { ci_build_url: page } : {}), ...(request ? { pull_request: request } : {}) };
  return Object.keys(metadata).length > 0 ? metadata : undefined;
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name]?.trim();
  if (!value) throw new UsageError(`${name} is not set: it names the Proctor server and its key (a CI secret)`);
  return value;
}

/** `proctor-ci run`'s flags and environment, read and checked once. */
export function parseRunSettings(args: string[], env: NodeJS.ProcessEnv): RunSettings {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        environment: { type: 'string' },
        branch: { type: 'string' },
        commit: { type: 'string' },
        env: { type: 'string', multiple: true },
        tag: { type: 'string', multiple: true },
        shards: { type: 'string' },
        rerun: { type: 'string' },
        'failed-only': { type: 'boolean' },
        timeout: { type: 'string' },
        poll: { type: 'string' },
        'fail-on-flaky': { type: 'boolean' },
        'no-notifications': { type: 'boolean' },
        'max-failures': { type: 'string' },
        affected: { type: 'boolean' },
        json: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (!values.environment) throw new UsageError("--environment is required (the environment's slug)");
  if (values['failed-only'] && !values.rerun) throw new UsageError('--failed-only needs --rerun RUN_ID');
  const url = required(env, 'PROCTOR_URL').replace(/\/+$/, '');
  if (!/^https?:\/\//.test(url)) throw new UsageError(`PROCTOR_URL must start with http:// or https://, not "${url}"`);
  const rerun = wholeNumber(values.rerun, '--rerun', 2_147_483_647);
  const shards = wholeNumber(values.shards, '--shards', 50);
  const maxFailures = wholeNumber(values['max-failures'], '--max-failures', 100_000);
  const body: TriggerBody = {
    environment: values.environment,
    // A rerun keeps its source's build unless the flags name another: the CI's own is not asked.
    build: build(values, rerun === undefined ? env : {}),
    metadata: ciMetadata(env),
    ...(values.tag?.length ? { tags: values.tag } : {}),
    ...(shards ? { total_shards: shards } : {}),
    ...(maxFailures ? { max_failures: maxFailures } : {}),
    ...(values.affected ? { affected: true } : {}),
    ...(values.env?.length ? { environment_variables_overrides: overrides(values.env) } : {}),
    send_notifications: !values['no-notifications'],
    ...(rerun === undefined ? {} : { rerun_source_id: rerun, ...(values['failed-only'] ? { rerun_only_failed: true } : {}) }),
  };
  if (body.build === undefined) delete body.build;
  if (body.metadata === undefined) delete body.metadata;
  return {
    url,
    apiKey: required(env, 'PROCTOR_API_KEY'),
    projectId: env.PROCTOR_PROJECT_ID?.trim() || null,
    body,
    timeoutMs: positive(values.timeout, '--timeout', 60) * 60_000,
    pollMs: positive(values.poll, '--poll', 10) * 1000,
    connectBudgetMs: positive(env.PROCTOR_CONNECT_BUDGET_S, 'PROCTOR_CONNECT_BUDGET_S', 30) * 1000,
    failOnFlaky: Boolean(values['fail-on-flaky']),
    json: Boolean(values.json),
  };
}
