// A run spread over agents: they join it, the first one's listing of the suite becomes the run's
// units (longest first by the environment's history, or likely failures first: order/), and each agent leases one unit at a time
// until none is left. A lease is held by the agent's heartbeat; one not renewed for the lease time
// goes back to the queue, and its unit to the next agent that asks.
import { meanDurations } from '../analytics/index.ts';
import type { Actor } from '../audit/index.ts';
import { createAgentToken, createRunKey } from '../auth/index.ts';
import { ADVISORY_LOCK, lockAdvisory, type Sql, type Tx } from '../db.ts';
import { environmentForReport } from '../environments/index.ts';
import { ConflictError, NotFoundError, RunEndedError } from '../errors.ts';
import { distributeToAgents, endShard, failRun, findOrCreateAgentRun, recordPlan } from '../runs/index.ts';
import { isTerminal, type RunState } from '../states.ts';
import type { AgentRunBody, Checkout, Plan, PlannedUnit, Unit } from './schema.ts';
import { packBatch } from './pack.ts';
import { agentLeasesGranted } from '../metrics.ts';
import { historiesOf, historyBranch, unitRiskRanks } from '../order/index.ts';
import { lastPassingRun } from '../selection/index.ts';
import {
  addAgent,
  agentName,
  agentsRunState,
  type AgentsRun,
  checkoutOf,
  type EstimatedUnit,
  extendLeases,
  insertUnits,
  isPlanner,
  freeUnits,
  joinOrder,
  leaseNext,
  leaseUnits,
  lockAgentsRun,
  lockUnit,
  orderedEnvironmentOf,
  otherAgents,
  plannedUnits,
  recordCrash,
  remainingUnits,
  touchAgent,
  unplannedRunsSilentSince,
} from './store.ts';

/** The CI build's run: the first agent makes it, the others find it by its run key. */
export async function agentRunOf(sql: Sql, projectId: number, body: AgentRunBody, now: Date, actor: Actor): Promise<{ id: number; state: string }> {
  // An environment the project lacks is made on first use, in the run's transaction.
  const { environment, run } = await sql.begin(async (tx) => {
    const environment = await environmentForReport(tx, projectId, body.environment, 'body.environment', { actor, now });
    const run = await findOrCreateAgentRun(
      tx,
      projectId,
      {
        environmentId: environment.id,
        runKey: body.run_key,
        totalShards: 1,
        branch: body.branch,
        commit: body.commit,
        buildUrl: body.build_url,
        pullRequest: body.pull_request,
        maxFailures: body.max_failures,
      },
      now,
    );
    return { environment, run };
  });
  if (run.environment_id !== environment.id) throw new ConflictError(`body.run_key: "${body.run_key}" belongs to run ${run.id} of another environment`);
  return { id: run.id, state: run.state };
}

export interface Joined {
  agentId: number;
  /** The agent's place in the run's join order, 0 for the first: PROCTOR_AGENT_INDEX of its units. */
  index: number;
  /** Agents joined so far, this one included. */
  joined: number;
  state: RunState;
  planned: boolean;
  checkout: Checkout;
  reporterKey: string;
  /** The agent's own token: its heartbeats, leases and plan, and its run's results. */
  agentToken: string;
  /** Failures first: the commit the planning agent lists changed tests since; null when not asked. */
  changedSince: string | null;
}

/** An agent joins a pending run or a run of agents that has not ended; a run of static shards under way is not theirs. */
export function joinRun(sql: Sql, projectId: number, runId: number, name: string, now: Date): Promise<Joined> {
  return sql.begin(async (tx) => {
    const run = await distributeToAgents(tx, projectId, runId, now);
    if (!run) throw new NotFoundError('test run not found');
    if (isTerminal(run.state as RunState)) throw new RunEndedError(`test run ${runId} has ended (${run.state}): there is no work left`, run.state);
    if (run.distribution !== 'agents')
      throw new ConflictError(`test run ${runId} is executed by the server in static shards (${run.state}); agents join a pending run or a run of agents`);
    const agentId = await addAgent(tx, runId, name, now);
    const checkout = await checkoutOf(tx, runId);
    return {
      agentId,
      ...(await joinOrder(tx, runId, agentId)),
      state: run.state as RunState,
      planned: run.planned,
      checkout,
      changedSince: await changedSinceOf(tx, projectId, runId, checkout.branch),
      reporterKey: await createRunKey(tx, projectId, runId),
      agentToken: await createAgentToken(tx, projectId, runId, agentId),
    };
  });
}

/**
 * For a failures-first environment, the commit of the last passing run on the run's branch: the
 * planning agent has the checkout, so it is the one to ask Playwright what changed since.
 */
async function changedSinceOf(sql: Tx, projectId: number, runId: number, runBranch: string | null): Promise<string | null> {
  const environment = await orderedEnvironmentOf(sql, runId);
  if (!environment || environment.order_strategy !== 'failures-first') return null;
  // A run whose CI named no branch learns it from the planning agent's checkout, after joining:
  // its history is its environment's mainline's, as the ranking reads it (bench/feedback's agents
  // on a workspace ranked no changed test until this fell back).
  const branch = await historyBranch(sql, projectId, environment.id, runBranch);
  if (!branch) return null;
  return (await lastPassingRun(sql, environment.id, branch, runId))?.commit ?? null;
}

/** The run, locked against its end while an agent's request is answered; a stranger to the run is a 404. */
async function runOfAgent(sql: Tx, projectId: number, runId: number, agentId: number, now: Date): Promise<AgentsRun> {
  const run = await lockAgentsRun(sql, projectId, runId);
  if (!run || !(await touchAgent(sql, runId, agentId, now))) throw new NotFoundError(`agent ${agentId} of test run ${runId} not found`);
  return run;
}

/**
 * The first agent's plan becomes the run's units, each estimated from the environment's history;
 * a later plan is ignored. A plan of no units ends the run: there is nothing to run.
 */
export async function planRun(sql: Sql, projectId: number, runId: number, plan: Plan, now: Date): Promise<{ planned: boolean; units: number }> {
  if (plan.error !== null) return failPlan(sql, projectId, runId, plan.agent_id, plan.error, now);
  const result = await sql.begin(async (tx) => {
    const run = await runOfAgent(tx, projectId, runId, plan.agent_id, now);
    if (isTerminal(run.state)) throw new RunEndedError(`test run ${runId} has ended (${run.state})`, run.state);
    const recorded = await recordPlan(tx, runId, plan.units.length, { commit: plan.commit, branch: plan.branch }, now);
    if (!recorded) return { planned: false, units: await plannedUnits(tx, runId) };
    const units = await estimated(tx, projectId, run.environment_id, plan.units);
    await insertUnits(
      tx,
      runId,
      units,
      recorded.order_strategy === 'failures-first'
        ? await riskRanks(tx, projectId, run.environment_id, recorded.branch, units, plan.changed_test_ids === null ? null : new Set(plan.changed_test_ids))
        : null,
    );
    return { planned: true, units: plan.units.length };
  });
  if (result.planned && result.units === 0) await failRun(sql, runId, "the run's selection leaves no test to run", now);
  return result;
}

/**
 * The agent to plan the run could not: an unplanned run ends `error` with its reason at once, never
 * staying queued for agents that would fail the same way. A run already planned keeps its plan.
 */
async function failPlan(sql: Sql, projectId: number, runId: number, agentId: number, error: string, now: Date): Promise<{ planned: boolean; units: number }> {
  const found = await sql.begin(async (tx) => {
    const run = await runOfAgent(tx, projectId, runId, agentId, now);
    return { run, name: (await agentName(tx, runId, agentId)) ?? String(agentId) };
  });
  if (found.run.planned || isTerminal(found.run.state)) return { planned: false, units: 0 };
  await failRun(sql, runId, `agent ${found.name} could not plan the run: ${error}`, now);
  return { planned: false, units: 0 };
}

/** A unit's estimate is the sum of its tests' mean durations; one test never run makes it unknown. */
async function estimated(sql: Tx, projectId: number, environmentId: number, units: PlannedUnit[]): Promise<EstimatedUnit[]> {
  const means = await meanDurations(
    sql,
    projectId,
    environmentId,
    units.flatMap((unit) => unit.tests.map((test) => test.id)),
  );
  return units.map((unit) => {
    const known = unit.tests.every((test) => means.has(test.id));
    return {
      runner_project: unit.runner_project,
      file: unit.file,
      tests: unit.tests.map((test) => test.line),
      test_ids: unit.tests.map((test) => test.id),
      estimate_ms: known ? Math.round(unit.tests.reduce((sum, test) => sum + (means.get(test.id) ?? 0), 0)) : null,
    };
  });
}

/**
 * Failures first (issue 56): each unit's place among those likeliest to fail on this build, from the
 * environment's history on the run's branch (else its mainline); null for a unit with no sign.
 */
async function riskRanks(
  sql: Tx,
  projectId: number,
  environmentId: number,
  branch: string | null,
  units: EstimatedUnit[],
  changed: ReadonlySet<string> | null,
): Promise<(number | null)[]> {
  const histories = await historiesOf(
    sql,
    projectId,
    environmentId,
    branch,
    units.flatMap((unit) => unit.test_ids),
    changed,
  );
  return unitRiskRanks(units, histories);
}

export interface Lease {
  /** The units leased, longest first: one, or with a budget a batch of one runner project; none when none is free. */
  units: Unit[];
  remaining: number;
  state: RunState;
  planned: boolean;
  /** Not planned yet, and this agent is the one to plan it: the others wait for its plan. */
  plan: boolean;
}

/**
 * The next unit for the agent, held for `leaseMs`; none when every unit is done or held, or the
 * run ended, or it is not planned yet (then `plan` says whether this agent is to plan it).
 *
 * With `budgetMs`, the agent runs several units in one Playwright (paying its start once): the
 * longest free unit, and the units packBatch gives it beside, within the budget: the free units
 * shared out over the run's agents heard from, each to the one with the least work left (what it
 * holds, less the time since it leased it). The run's leases are taken one at a time (a lock per
 * run), so that agents leasing at once are packed against one another: their first batches are one
 * partition of the run, and no unit is left over for a second Playwright start. (Each agent packing
 * against its share of the work it could see left a 15 s unit out of bench/agents' first batches:
 * 1.28 × the ideal.)
 */
export function leaseUnit(
  sql: Sql,
  projectId: number,
  runId: number,
  agentId: number,
  leaseMs: number,
  now: Date,
  budgetMs: number | null = null,
): Promise<Lease> {
  const leased = sql.begin(async (tx) => {
    await lockAdvisory(tx, ADVISORY_LOCK.agentLeases, runId);
    const run = await runOfAgent(tx, projectId, runId, agentId, now);
    const lease = { units: [], remaining: 0, state: run.state, planned: run.planned, plan: false };
    if (isTerminal(run.state)) return lease;
    if (!run.planned) return { ...lease, plan: await isPlanner(tx, runId, agentId, now, leaseMs) };
    const until = new Date(now.getTime() + leaseMs);
    const activeSince = new Date(now.getTime() - leaseMs);
    let units: Unit[];
    if (budgetMs === null) {
      const next = await leaseNext(tx, runId, agentId, now, until, activeSince);
      units = next ? [next] : [];
    } else {
      const free = await freeUnits(tx, runId, agentId, now, activeSince);
      const others = await otherAgents(tx, runId, agentId, now, activeSince);
      units = await leaseUnits(tx, runId, agentId, packBatch({ free, others, budget_ms: budgetMs }), now, until);
    }
    return { ...lease, units, remaining: await remainingUnits(tx, runId) };
  });
  return leased.then((lease) => {
    agentLeasesGranted.inc(lease.units.length);
    return lease;
  });
}

/**
 * The run's state as its agent asks it between heartbeats (every second): nothing is locked or
 * written, so that a cancel reaches every agent within a second at the cost of one read each.
 */
export async function agentRunState(sql: Sql, projectId: number, runId: number): Promise<{ state: RunState; cancelled_by: string | null }> {
  const run = await agentsRunState(sql, projectId, runId);
  if (!run) throw new NotFoundError(`test run ${runId} not found`);
  return run;
}

/** The agent is alive: its leases are extended. The run's state tells it of a cancel. */
export function agentHeartbeat(
  sql: Sql,
  projectId: number,
  runId: number,
  agentId: number,
  leaseMs: number,
  now: Date,
): Promise<{ state: RunState; units: number[] }> {
  return sql.begin(async (tx) => {
    const run = await runOfAgent(tx, projectId, runId, agentId, now);
    const units = isTerminal(run.state) ? [] : await extendLeases(tx, runId, agentId, now, new Date(now.getTime() + leaseMs));
    return { state: run.state, units };
  });
}

/**
 * The agent's unit crashed: its Playwright ended without its reporter ending the unit. The first
 * crash sends the unit back to the queue for another agent (leaseNext); the second ends its shard
 * `crashed` with every crash's reason, so that the run ends `error` naming the unit, once its
 * other units end. `retried` says which it was.
 */
export async function unitCrashed(
  sql: Sql,
  projectId: number,
  runId: number,
  agentId: number,
  unitNumber: number,
  error: string,
  now: Date,
): Promise<{ retried: boolean }> {
  const crash = await sql.begin(async (tx) => {
    const run = await runOfAgent(tx, projectId, runId, agentId, now);
    if (isTerminal(run.state)) throw new RunEndedError(`test run ${runId} has ended (${run.state})`, run.state);
    const unit = await lockUnit(tx, runId, unitNumber);
    if (!unit) throw new NotFoundError(`unit ${unitNumber} of test run ${runId} not found`);
    if (unit.done) return null;
    const name = (await agentName(tx, runId, agentId)) ?? String(agentId);
    const what = `unit ${unit.unit} (${unit.file}${unit.runner_project ? `, ${unit.runner_project}` : ''})`;
    const reason = `${what} crashed ${unit.crashes === 0 ? '' : 'again '}on agent ${name}: ${error}`;
    const retry = unit.crashes === 0;
    await recordCrash(tx, runId, unitNumber, agentId, reason, retry, now);
    return { retry, errors: [...unit.crash_errors, reason] };
  });
  if (!crash) return { retried: false };
  if (crash.retry) return { retried: true };
  await endShard(sql, projectId, runId, unitNumber, { status: 'crashed', errors: crash.errors }, now);
  return { retried: false };
}

/**
 * Runs of agents not planned yet whose every agent went silent for the lease time (killed, or gone
 * before it could plan or say why) end `error`, naming the agents: no agent is left to plan them.
 * A run no agent joined yet waits for its first. Returns the ids it ended.
 */
export async function finishUnplannedRuns(sql: Sql, now: Date, leaseMs: number): Promise<number[]> {
  const silentSince = new Date(now.getTime() - leaseMs);
  const silent = await unplannedRunsSilentSince(sql, silentSince);
  const seconds = Math.round(leaseMs / 1000);
  const ended: number[] = [];
  for (const { id, agents } of silent) {
    const reason = `every agent of the run (${agents.join(', ')}) went silent for ${seconds} s before planning it: none is left to plan it`;
    if (await failRun(sql, id, reason, now)) ended.push(id);
  }
  return ended;
}
