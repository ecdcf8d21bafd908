// The agent's side of the agents' API, on the one client every Proctor client shares: retried on
// network errors and 429/500/502/503/504 with bounded backoff (every call is safe to repeat). The
// server checks these shapes against its schemas at compile time (server/src/agents/schema.ts).
import { isTerminalState } from '../runs/client.ts';
import { ApiError, callJson, type TransportOptions } from '../api/transport.ts';

export { ApiError };

/** A run's state as the server names it. */
export type RunState = 'pending' | 'queued' | 'running' | 'passed' | 'failed' | 'error' | 'cancelled';

/** What every agent of a run checks out and runs: the run's repository, revision and selection. */
export interface Checkout {
  /** Null when the project has no test repository: the agent runs in the CI job's own checkout. */
  repo_url: string | null;
  branch: string | null;
  /** The commit every agent checks out: the first agent's, once it planned the units. */
  commit: string | null;
  tags: string[];
  test_case_ids: string[];
  runner_projects_match: string[];
  runner_projects_ignore: string[];
  env_files: string[];
  /** The deployed build's URL a trigger gave: the tests' BASE_URL and PLAYWRIGHT_BASE_URL. */
  build_url: string | null;
  environment_variables_overrides: { name: string; value: string }[];
  /** The environment's Playwright arguments (absent from servers before 0.3). */
  playwright_args?: string[];
}

/** A unit as its planner sends it: a spec file of a runner project (or one test of a parallel file), its `--test-list` lines. */
export interface PlannedUnit {
  runner_project: string;
  file: string;
  tests: { id: string; line: string }[];
}

/** A leased unit: reported as the run's shard of its number. */
export interface Unit {
  unit: number;
  runner_project: string;
  file: string;
  /** `--test-list` lines. */
  tests: string[];
  test_ids: string[];
  estimate_ms: number | null;
}

/** The run of a CI build's agents, made by the first and found by the others through run_key. */
export interface AgentRunBody {
  environment: string;
  run_key: string;
  branch: string | null;
  commit: string | null;
  build_url: string | null;
  pull_request?: number;
  /** Fail fast: the run stops once this many tests failed; sent only when set. */
  max_failures?: number;
}

export interface JoinAnswer {
  /** `index`: the agent's place in the run's join order (0 first), `joined`: agents so far; absent from older servers. */
  agent: { id: number; name: string; index?: number; joined?: number };
  test_run: { id: number; state: RunState; planned: boolean };
  checkout: Checkout;
  reporter_key: string;
  agent_token: string;
  lease_seconds: number;
  /** Failures first: the commit to list the tests changed since, for the plan; null or absent (older servers): not asked. */
  changed_since?: string | null;
}

export interface LeaseAnswer {
  unit: Unit | null;
  /** Every unit leased, `unit` first: several when the lease asked for a budget (absent from older servers). */
  units?: Unit[];
  remaining: number;
  test_run: { state: RunState; planned: boolean };
  plan: boolean;
}

/** The run's state as an agent asks it between heartbeats; `cancelled_by` is `max_failures` when fail fast stopped it. */
export interface RunStateAnswer {
  test_run: { state: RunState; cancelled_by: string | null };
}

export class AgentApi {
  private readonly options: TransportOptions;
  /** The key the agent started with (its token replaces it once joined): what asks the run's state when the token is refused. */
  private readonly startKey: string;
  private joined = false;
  /** Whether the server leases several units at once: false once it refused a budget. */
  private batches = true;

  constructor(url: string, key: string, retries: { attempts: number; maxBackoffMs: number } = { attempts: 8, maxBackoffMs: 10_000 }) {
    this.options = { url, apiKey: key, projectId: null, maxAttempts: retries.attempts, maxBackoffMs: retries.maxBackoffMs };
    this.startKey = key;
  }

  get url(): string {
    return this.options.url;
  }

  async agentRun(body: AgentRunBody): Promise<number> {
    return (await this.call<{ data: { test_run: { id: number } } }>('POST', '/api/test-runs/agent-run', body)).data.test_run.id;
  }

  /**
   * Joins the run; every later call goes with the agent's own token, which its run's other agents
   * cannot use. Null when the run has ended: its state says so.
   */
  async join(runId: number, name: string): Promise<JoinAnswer | null> {
    try {
      const joined = (await this.call<{ data: JoinAnswer }>('POST', `/api/test-runs/${runId}/agents`, { name })).data;
      this.options.apiKey = joined.agent_token;
      this.joined = true;
      return joined;
    } catch (error) {
      if (error instanceof ApiError && error.status === 409 && isTerminalState(await this.state(runId))) return null;
      throw error;
    }
  }

  async state(runId: number): Promise<RunState> {
    return (await this.call<{ data: { test_run: { testRun: { state: RunState } } } }>('GET', `/api/test-runs/${runId}`)).data.test_run.testRun.state;
  }

  async plan(
    runId: number,
    agentId: number,
    revision: { commit: string | null; branch: string | null },
    units: PlannedUnit[],
    changedTestIds: string[] | null = null,
  ): Promise<{ planned: boolean; units: number }> {
    // Sent only when asked for (`changed_since`): a server that does not ask would refuse the field.
    const changed = changedTestIds === null ? {} : { changed_test_ids: changedTestIds };
    return (
      await this.call<{ data: { planned: boolean; units: number } }>('PUT', `/api/test-runs/${runId}/units`, {
        agent_id: agentId,
        ...revision,
        units,
        ...changed,
      })
    ).data;
  }

  /** This agent was to plan the run and could not: the server ends the run `error` with the reason. */
  async planFailed(runId: number, agentId: number, error: string): Promise<void> {
    await this.call('PUT', `/api/test-runs/${runId}/units`, { agent_id: agentId, commit: null, branch: null, units: [], error: error.slice(0, 20_000) });
  }

  /**
   * The next unit, or with `budgetMs` units whose estimates sum to about that, to run in one
   * Playwright. A server that refuses the budget (an older one) is asked for one unit from then on.
   */
  async lease(runId: number, agentId: number, budgetMs: number | null = null): Promise<LeaseAnswer> {
    const path = `/api/test-runs/${runId}/units/lease`;
    if (budgetMs !== null && this.batches) {
      try {
        return (await this.call<{ data: LeaseAnswer }>('POST', path, { agent_id: agentId, budget_ms: Math.round(budgetMs) })).data;
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 400)) throw error;
        this.batches = false;
      }
    }
    return (await this.call<{ data: LeaseAnswer }>('POST', path, { agent_id: agentId })).data;
  }

  async heartbeat(runId: number, agentId: number): Promise<{ state: RunState; units: number[] }> {
    const { data } = await this.call<{ data: { test_run: { state: RunState }; leased_units: number[] } }>(
      'POST',
      `/api/test-runs/${runId}/agents/${agentId}/heartbeat`,
      {},
    );
    return { state: data.test_run.state, units: data.leased_units };
  }

  /**
   * The run's state, asked every second between heartbeats (a read: no lease is extended). Null
   * from a server without the route (before 0.4), which tells its agents of a cancel at heartbeats.
   */
  async runState(runId: number, agentId: number): Promise<RunStateAnswer['test_run'] | null> {
    try {
      return (await this.call<{ data: RunStateAnswer }>('GET', `/api/test-runs/${runId}/agents/${agentId}/state`)).data.test_run;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404 && !error.runEnded) return null;
      throw error;
    }
  }

  /**
   * A unit whose Playwright ended without its reporter ending the shard (killed, crashed on load):
   * true when the server sends it to another agent (its first crash), false when it failed it.
   */
  async crashed(runId: number, agentId: number, unit: number, error: string): Promise<boolean> {
    try {
      const answer = await this.call<{ data: { retried: boolean } }>('POST', `/api/test-runs/${runId}/units/${unit}/crash`, {
        agent_id: agentId,
        error: error.slice(0, 20_000),
      });
      return answer.data.retried;
    } catch (error_) {
      // The run ended meanwhile (another agent's unit ended it, or a cancel): nothing to record.
      if ((error_ instanceof ApiError && error_.status === 409) || (await this.endOf(runId, error_))) return false;
      // A server before 0.3 has no retries: the unit's shard ends crashed at once.
      if (error_ instanceof ApiError && error_.status === 404) {
        await this.call('POST', `/api/test-runs/${runId}/shards/${unit}/end`, { status: 'crashed', errors: [error.slice(0, 20_000)] }).catch(
          async (ended: unknown) => {
            if (!(ended instanceof ApiError && ended.status === 409) && !(await this.endOf(runId, ended))) throw ended;
          },
        );
        return false;
      }
      throw error_;
    }
  }

  /**
   * The run's end, when `error` is the refusal of this agent's token: the server ends an agent's
   * token with its run (a 401 from then on), so the state is asked with the key the agent started
   * with; `ended` when that key is refused too (the executor's key of the run ends with it as
   * well). Null for any other error, or when the run goes on (the token was revoked).
   */
  async endOf(runId: number, error: unknown): Promise<RunState | 'ended' | null> {
    if (!this.joined || !(error instanceof ApiError) || error.status !== 401) return null;
    try {
      const { data } = await callJson<{ data: { test_run: { testRun: { state: RunState } } } }>(
        { ...this.options, apiKey: this.startKey },
        'GET',
        `/api/test-runs/${runId}`,
      );
      return isTerminalState(data.test_run.testRun.state) ? data.test_run.testRun.state : null;
    } catch (asked) {
      return asked instanceof ApiError && asked.status === 401 ? 'ended' : null;
    }
  }

  private call<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<T> {
    return callJson<T>(this.options, method, path, body);
  }
}
