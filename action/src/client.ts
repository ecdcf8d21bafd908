import { ApiError, callJson, isTransient, type TransportOptions } from '../../reporter/src/transport.ts';
import type { Settings } from './settings.ts';

/** A failure worth waiting out: the network, 429, or a 5xx. */
export class TransientError extends Error {}
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
  };
  flattenedSummaryDetails: RunSummaryDetail[];
}

const MEANING: Record<number, string> = {
  401: 'the API key was refused: check the api-key input (a Proctor key, stored as a secret)',
  403: 'the API key may not use this project: check api-key and project-id',
};

/** Proctor's API as the action uses it, on the client every Proctor client shares. The key is sent, never printed. */
export class ProctorClient {
  private readonly options: TransportOptions;

  constructor(settings: Pick<Settings, 'url' | 'apiKey' | 'projectId'>) {
    // One attempt per call: the action's own loops wait out what may pass, over minutes.
    this.options = { url: settings.url, apiKey: settings.apiKey, projectId: settings.projectId, maxAttempts: 1, maxBackoffMs: 0 };
  }

  private async request<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<T> {
    try {
      return await callJson<T>(this.options, method, path, body);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (isTransient(error)) throw new TransientError(error.status === null ? `${this.options.url} could not be reached (${error.message})` : error.message);
      throw new FatalError(
        MEANING[error.status as number] ? `HTTP ${error.status}: ${MEANING[error.status as number]}` : error.message,
        error.status as number,
      );
    }
  }

  async trigger(body: Record<string, unknown>): Promise<{ id: number; state: string }> {
    const response = await this.request<{ data: { test_run: { id: number; state: string } } }>('PUT', '/api/test-runs', body);
    return response.data.test_run;
  }

  /** The run a CI build's agents share: made by the first to ask, found by the others by its key. */
  async agentRun(body: { environment: string; run_key: string; branch: string | null; commit: string | null; build_url: string | null }): Promise<number> {
    return (await this.request<{ data: { test_run: { id: number } } }>('POST', '/api/test-runs/agent-run', body)).data.test_run.id;
  }

  async read(runId: number): Promise<RunView> {
    return (await this.request<{ data: { test_run: RunView } }>('GET', `/api/test-runs/${runId}`)).data.test_run;
  }

  async cancel(runId: number, reason: string): Promise<void> {
    await this.request('POST', `/api/test-runs/${runId}/cancel`, { reason });
  }
}
