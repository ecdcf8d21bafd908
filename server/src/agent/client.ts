// The agent's side of the agents' API: every call JSON, with the project key, retried on network
// errors and 429/500/502/503/504 with bounded backoff (every call is safe to repeat).
import type { Checkout, PlannedUnit, Unit } from '../agents/schema.ts';
import type { RunState } from '../states.ts';

const RETRYABLE = new Set([429, 500, 502, 503, 504]);
const REQUEST_TIMEOUT_MS = 30_000;

/** The server answered with a status that no retry changes. */
export class AgentApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

export interface JoinAnswer {
  agent: { id: number; name: string };
  test_run: { id: number; state: RunState; planned: boolean };
  checkout: Checkout;
  reporter_key: string;
  agent_token: string;
  lease_seconds: number;
}

export interface LeaseAnswer {
  unit: Unit | null;
  remaining: number;
  test_run: { state: RunState; planned: boolean };
  plan: boolean;
}

export class AgentApi {
  constructor(
    readonly url: string,
    private key: string,
    private readonly options: { attempts: number; maxBackoffMs: number } = { attempts: 8, maxBackoffMs: 10_000 },
  ) {}

  async agentRun(body: { environment: string; run_key: string; branch: string | null; commit: string | null; build_url: string | null }): Promise<number> {
    return (await this.call<{ data: { test_run: { id: number } } }>('POST', '/api/test-runs/agent-run', body)).data.test_run.id;
  }

  /** Joins the run; every later call goes with the agent's own token, which its run's other agents cannot use. */
  async join(runId: number, name: string): Promise<JoinAnswer> {
    const joined = (await this.call<{ data: JoinAnswer }>('POST', `/api/test-runs/${runId}/agents`, { name })).data;
    this.key = joined.agent_token;
    return joined;
  }

  async plan(runId: number, agentId: number, revision: { commit: string | null; branch: string | null }, units: PlannedUnit[]): Promise<{ planned: boolean; units: number }> {
    return (await this.call<{ data: { planned: boolean; units: number } }>('PUT', `/api/test-runs/${runId}/units`, { agent_id: agentId, ...revision, units })).data;
  }

  async lease(runId: number, agentId: number): Promise<LeaseAnswer> {
    return (await this.call<{ data: LeaseAnswer }>('POST', `/api/test-runs/${runId}/units/lease`, { agent_id: agentId })).data;
  }

  async heartbeat(runId: number, agentId: number): Promise<{ state: RunState; units: number[] }> {
    const { data } = await this.call<{ data: { test_run: { state: RunState }; leased_units: number[] } }>('POST', `/api/test-runs/${runId}/agents/${agentId}/heartbeat`, {});
    return { state: data.test_run.state, units: data.leased_units };
  }

  /** A unit whose Playwright ended without its reporter ending the shard (killed, crashed on load). */
  async crashed(runId: number, unit: number, errors: string[]): Promise<void> {
    await this.call('POST', `/api/test-runs/${runId}/shards/${unit}/end`, { status: 'crashed', errors }).catch((error: unknown) => {
      // The run ended meanwhile (another agent's unit ended it, or a cancel): nothing to record.
      if (!(error instanceof AgentApiError && error.status === 409)) throw error;
    });
  }

  private async call<T>(method: 'GET' | 'POST' | 'PUT', path: string, body: unknown): Promise<T> {
    let last: AgentApiError = new AgentApiError('not sent', null);
    for (let attempt = 0; attempt < this.options.attempts; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(this.options.maxBackoffMs, 250 * 2 ** attempt)));
      try {
        const response = await fetch(`${this.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${this.key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        const text = await response.text();
        if (response.ok) return JSON.parse(text) as T;
        last = new AgentApiError(`${method} ${path}: HTTP ${response.status}: ${messageOf(text)}`, response.status);
        if (!RETRYABLE.has(response.status)) throw last;
      } catch (error) {
        if (error instanceof AgentApiError && !RETRYABLE.has(error.status ?? 0)) throw error;
        if (!(error instanceof AgentApiError)) last = new AgentApiError(`${method} ${path}: ${(error as Error).message}`, null);
      }
    }
    throw last;
  }
}

function messageOf(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: string } | string };
    return (typeof body.error === 'string' ? body.error : body.error?.message) ?? text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}
