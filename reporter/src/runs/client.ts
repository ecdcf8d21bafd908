import { ApiError, callJson, isTransient, type TransportOptions } from '../api/transport.ts';

// A triggered run as its waiters (the GitHub Action and `proctor-ci run`) read it, on the client
// every Proctor client shares. The server checks these shapes against its own schemas at compile
// time (server/src/runs/schema.ts).

/** The states a run ends in. */
export const TERMINAL_RUN_STATES = ['passed', 'failed', 'error', 'cancelled'] as const;

export function isTerminalState(state: string): boolean {
  return (TERMINAL_RUN_STATES as readonly string[]).includes(state);
}

/** A failure worth waiting out: the network, 429, or a 5xx. */
export class TransientError extends Error {
  constructor(
    message: string,
    /** No connection was made at all (as opposed to a server that answered 5xx). */
    readonly unreachable: boolean,
  ) {
    super(message);
  }
}

/** A failure no retry mends: a wrong key (401), no access (403), no such run or environment (404), bad input. */
export class FatalError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export interface RunSummaryDetail {
  test_case_id: string;
  title: string;
  file_path: string;
  runner_project: string;
  status: string;
  snoozed: boolean;
  error_message: string | null;
  failure_group_id: string | null;
  /** From servers of 0.2.0 on. */
  failure_group_title?: string | null;
}

export interface RunView {
  testRun: {
    id: number;
    /** Its number in its project, what pages and these commands name it by (optional: older servers send none). */
    number?: number;
    state: string;
    total_count: number;
    success_count: number;
    failed_count: number;
    flaky_count: number;
    skipped_count: number;
    duration: number | null;
    summary_url: string;
    environment_name: string;
    error_reason: string | null;
    /** Why it was cancelled, and by whom (`max_failures`: fail fast stopped it); absent from servers before 0.3. */
    cancel_reason?: string | null;
    cancelled_by?: string | null;
    /** The branch the run tested, if it said one (optional: older waiters' fixtures leave it out). */
    test_run_branch?: string | null;
    /** Which tests a run made with `affected` ran, and why (`--affected`); absent from older servers, null when not asked. */
    selection?: RunSelection | null;
  };
  flattenedSummaryDetails: RunSummaryDetail[];
}

/** `PUT /api/test-runs`: the fields its waiters send. */
export interface TriggerBody {
  environment: string;
  branch?: string;
  build?: { url?: string; branch?: string; commit?: string; repo?: string; version?: string };
  tags?: string[];
  test_case_ids?: string[];
  total_shards?: number;
  metadata?: Record<string, string | number>;
  environment_variables_overrides?: { name: string; value: string }[];
  send_notifications?: boolean;
  rerun_source_id?: number;
  rerun_only_failed?: boolean;
  scm_actor?: string;
  /** Fail fast: stop the run once this many tests failed that no snooze covers (`--max-failures`, the action's `max-failures`). */
  max_failures?: number;
  /** Only the tests a change can break (`--affected`): those Playwright finds affected since the last passing run, and last failures. */
  affected?: boolean;
}

/** A run's `selection`: what an affected run ran. */
export interface RunSelection {
  mode: 'affected' | 'all';
  base_commit: string | null;
  base_run_id: number | null;
  /** Why every test ran (`all`). */
  reason: string | null;
  /** How many tests no change could affect, left out. */
  left_out: number;
}

export interface TriggeredRun {
  id: number;
  state: string;
  /** The test repository's branch that runs; null until the server could read the repository. */
  test_run_branch: string | null;
}

export interface RunsClientOptions {
  url: string;
  apiKey: string;
  projectId: string | null;
  /** What a refusal means to the caller's user, by status (401: where the key comes from). */
  refusals?: Record<number, string>;
}

/** Proctor's API as a run's trigger and waiters use it. The key is sent, never printed. */
export class RunsClient {
  private readonly options: TransportOptions;
  private readonly refusals: Record<number, string>;

  constructor(settings: RunsClientOptions) {
    // One attempt per call: the waiters' own loops wait out what may pass, over minutes.
    this.options = { url: settings.url, apiKey: settings.apiKey, projectId: settings.projectId, maxAttempts: 1, maxBackoffMs: 0 };
    this.refusals = settings.refusals ?? {};
  }

  private async request<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<T> {
    try {
      return await callJson<T>(this.options, method, path, body);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (isTransient(error)) {
        const unreachable = error.status === null;
        throw new TransientError(unreachable ? `${this.options.url} could not be reached (${error.message})` : error.message, unreachable);
      }
      const status = error.status as number;
      throw new FatalError(this.refusals[status] ? `HTTP ${status}: ${this.refusals[status]}` : error.message, status);
    }
  }

  async trigger(body: TriggerBody): Promise<TriggeredRun> {
    const response = await this.request<{ data: { test_run: TriggeredRun } }>('PUT', '/api/test-runs', body);
    return response.data.test_run;
  }

  /** The run a CI build's agents share: made by the first to ask, found by the others by its key. */
  async agentRun(body: {
    environment: string;
    run_key: string;
    branch: string | null;
    commit: string | null;
    build_url: string | null;
    max_failures?: number;
  }): Promise<number> {
    return (await this.request<{ data: { test_run: { id: number } } }>('POST', '/api/test-runs/agent-run', body)).data.test_run.id;
  }

  async read(runId: number): Promise<RunView> {
    return (await this.request<{ data: { test_run: RunView } }>('GET', `/api/test-runs/${runId}`)).data.test_run;
  }

  async cancel(runId: number, reason: string): Promise<void> {
    await this.request('POST', `/api/test-runs/${runId}/cancel`, { reason });
  }
}
