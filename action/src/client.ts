import { errorMessageOf } from '../../reporter/src/wire.ts';
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

/** Proctor's API as the action uses it. The key is sent, never printed. */
export class ProctorClient {
  constructor(private readonly settings: Pick<Settings, 'url' | 'apiKey' | 'projectId'>) {}

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.settings.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.settings.apiKey}`,
          ...(this.settings.projectId ? { 'x-project-id': this.settings.projectId } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
      throw new TransientError(`${this.settings.url} could not be reached (${cause})`);
    }
    const text = await response.text();
    if (response.ok) return JSON.parse(text) as T;
    const message = errorMessageOf(text) ?? response.statusText;
    if (response.status === 429 || response.status >= 500) throw new TransientError(`HTTP ${response.status}: ${message}`);
    throw new FatalError(`HTTP ${response.status}: ${MEANING[response.status] ?? message}`, response.status);
  }

  async trigger(body: Record<string, unknown>): Promise<{ id: number; state: string }> {
    const response = await this.request<{ data: { test_run: { id: number; state: string } } }>('PUT', '/api/test-runs', body);
    return response.data.test_run;
  }

  async read(runId: number): Promise<RunView> {
    return (await this.request<{ data: { test_run: RunView } }>('GET', `/api/test-runs/${runId}`)).data.test_run;
  }

  async cancel(runId: number, reason: string): Promise<void> {
    await this.request('POST', `/api/test-runs/${runId}/cancel`, { reason });
  }
}
