import type { Tx } from '../db.ts';
import type { RunState } from '../states.ts';
import type { Checkout, Unit } from './schema.ts';

// The one module that writes `test_run_agents` and `test_run_units`. A unit is done when the run's
// shard of its number has ended (its reporter ended it, or its agent said it crashed).

export interface EstimatedUnit {
  runner_project: string;
  file: string;
  tests: string[];
  test_ids: string[];
  estimate_ms: number | null;
}

export async function addAgent(sql: Tx, runId: number, name: string, now: Date): Promise<number> {
  const [agent] = await sql<{ id: number }[]>`
    insert into test_run_agents (test_run_id, name, joined_at, last_seen_at) values (${runId}, ${name}, ${now}, ${now}) returning id`;
  return (agent as { id: number }).id;
}

/** Marks the agent alive; false when it is not an agent of this run. */
export async function touchAgent(sql: Tx, runId: number, agentId: number, now: Date): Promise<boolean> {
  const rows = await sql`update test_run_agents set last_seen_at = ${now} where id = ${agentId} and test_run_id = ${runId} returning id`;
  return rows.length > 0;
}

/** The run's units, numbered 1.. in the order given, with their failures-first ranks (null: a duration run). */
export async function insertUnits(sql: Tx, runId: number, units: EstimatedUnit[], riskRanks: (number | null)[] | null): Promise<void> {
  if (units.length === 0) return;
  const rows = units.map((unit, i) => ({ ...unit, unit: i + 1, risk_rank: riskRanks?.[i] ?? null }));
  await sql`
    insert into test_run_units (test_run_id, unit, runner_project, file, tests, test_ids, estimate_ms, risk_rank)
    select ${runId}, x.unit, x.runner_project, x.file, x.tests, x.test_ids, x.estimate_ms, x.risk_rank
    from jsonb_to_recordset(${sql.json(rows)}) as x(unit int, runner_project text, file text, tests text[], test_ids text[], estimate_ms int, risk_rank int)`;
}

/**
 * The order units are handed out in: a failures-first run's ranked units first (risk_rank 1 first),
 * then longest first (unknown durations first), as every unit of a duration run (no ranks).
 */
const leaseOrder = (sql: Tx) => sql`u.risk_rank nulls last, u.estimate_ms desc nulls first, u.unit`;

/**
 * Gives the agent the first unit in lease order (leaseOrder: likeliest to fail, then longest) that
 * is neither done nor held, held until `leasedUntil`. SKIP LOCKED: agents leasing at once get
 * different units. A unit that crashed on this agent is left to the others while another agent
 * was heard from since `activeSince`; with none, this agent takes it again once its crash is that
 * old too (a lease time, for an agent that joins late to take it first).
 */
export async function leaseNext(sql: Tx, runId: number, agentId: number, now: Date, leasedUntil: Date, activeSince: Date): Promise<Unit | null> {
  const [unit] = await sql<Unit[]>`
    with next as (
      select u.unit from test_run_units u
      where u.test_run_id = ${runId}
        and (u.leased_until is null or u.leased_until < ${now})
        and not exists (select 1 from test_run_shards s where s.test_run_id = u.test_run_id and s.shard = u.unit and s.status is not null)
        and (u.crashed_agent_id is distinct from ${agentId}
             or (u.crashed_at < ${activeSince}
                 and not exists (select 1 from test_run_agents a where a.test_run_id = u.test_run_id and a.id <> ${agentId} and a.last_seen_at >= ${activeSince})))
      order by ${leaseOrder(sql)}
      for update of u skip locked
      limit 1
    )
    update test_run_units u set agent_id = ${agentId}, leased_until = ${leasedUntil}, leased_at = ${now}, leases = u.leases + 1
    from next where u.test_run_id = ${runId} and u.unit = next.unit
    returning u.unit, u.runner_project, u.file, u.tests, u.test_ids, u.estimate_ms`;
  return unit ?? null;
}

/** The same filter as leaseNext's: units the agent could lease now, longest first (not locked: leaseUnits checks again). */
const freeFilter = (sql: Tx, runId: number, agentId: number, now: Date, activeSince: Date) => sql`
  u.test_run_id = ${runId}
  and (u.leased_until is null or u.leased_until < ${now})
  and not exists (select 1 from test_run_shards s where s.test_run_id = u.test_run_id and s.shard = u.unit and s.status is not null)
  and (u.crashed_agent_id is distinct from ${agentId}
       or (u.crashed_at < ${activeSince}
           and not exists (select 1 from test_run_agents a where a.test_run_id = u.test_run_id and a.id <> ${agentId} and a.last_seen_at >= ${activeSince})))`;

/** The units free for the agent now, in lease order, as leaseNext would give them, each with its failures-first rank. */
export async function freeUnits(sql: Tx, runId: number, agentId: number, now: Date, activeSince: Date): Promise<(Unit & { risk_rank: number | null })[]> {
  return sql<(Unit & { risk_rank: number | null })[]>`
    select u.unit, u.runner_project, u.file, u.tests, u.test_ids, u.estimate_ms, u.risk_rank from test_run_units u
    where ${freeFilter(sql, runId, agentId, now, activeSince)}
    order by ${leaseOrder(sql)}`;
}

/** Leases the units that are still free (another agent may have taken one meanwhile); returns those leased, in the order given. */
export async function leaseUnits(sql: Tx, runId: number, agentId: number, units: number[], now: Date, leasedUntil: Date): Promise<Unit[]> {
  if (units.length === 0) return [];
  const rows = await sql<Unit[]>`
    update test_run_units u set agent_id = ${agentId}, leased_until = ${leasedUntil}, leased_at = ${now}, leases = u.leases + 1
    where u.test_run_id = ${runId} and u.unit = any(${units}::int[]) and (u.leased_until is null or u.leased_until < ${now})
    returning u.unit, u.runner_project, u.file, u.tests, u.test_ids, u.estimate_ms`;
  return units.flatMap((unit) => rows.filter((row) => row.unit === unit));
}

/**
 * The run's other agents heard from since `activeSince`, each with the estimates of the units it
 * holds and has not ended (null for a unit never run) and the time since it leased them.
 */
export async function otherAgents(
  sql: Tx,
  runId: number,
  agentId: number,
  now: Date,
  activeSince: Date,
): Promise<{ held: (number | null)[]; elapsed_ms: number }[]> {
  const rows = await sql<{ held: (number | null)[]; leased_at: Date | null }[]>`
    -- json, not int[]: postgres.js reads an int[]'s NULL (a unit never run) as NaN, which packBatch took for an estimate.
    select coalesce(json_agg(u.estimate_ms order by u.unit) filter (where u.unit is not null), '[]') as held, min(u.leased_at) as leased_at
    from test_run_agents a
    left join test_run_units u on u.test_run_id = a.test_run_id and u.agent_id = a.id and u.leased_until >= ${now}
      and not exists (select 1 from test_run_shards s where s.test_run_id = u.test_run_id and s.shard = u.unit and s.status is not null)
    where a.test_run_id = ${runId} and a.id <> ${agentId} and a.last_seen_at >= ${activeSince}
    group by a.id order by a.id`;
  return rows.map((row) => ({ held: row.held, elapsed_ms: row.leased_at ? Math.max(0, now.getTime() - new Date(row.leased_at).getTime()) : 0 }));
}

/** Units of the run not done yet (held or not). */
export async function remainingUnits(sql: Tx, runId: number): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from test_run_units u
    where u.test_run_id = ${runId}
      and not exists (select 1 from test_run_shards s where s.test_run_id = u.test_run_id and s.shard = u.unit and s.status is not null)`;
  return row?.n ?? 0;
}

/** Extends the leases the agent still holds on units not done; returns their numbers. */
export async function extendLeases(sql: Tx, runId: number, agentId: number, now: Date, leasedUntil: Date): Promise<number[]> {
  const rows = await sql<{ unit: number }[]>`
    update test_run_units u set leased_until = ${leasedUntil}
    where u.test_run_id = ${runId} and u.agent_id = ${agentId} and u.leased_until >= ${now}
      and not exists (select 1 from test_run_shards s where s.test_run_id = u.test_run_id and s.shard = u.unit and s.status is not null)
    returning u.unit`;
  return rows.map((row) => row.unit).sort((a, b) => a - b);
}

/**
 * Whether the agent is the one to plan the run: the first of its agents still heard from within
 * `leaseMs` (so that one planner lists the suite, and another takes over if it goes silent).
 */
export async function isPlanner(sql: Tx, runId: number, agentId: number, now: Date, leaseMs: number): Promise<boolean> {
  const [row] = await sql<{ id: number | null }[]>`
    select min(id) as id from test_run_agents where test_run_id = ${runId} and last_seen_at >= ${new Date(now.getTime() - leaseMs)}`;
  return row?.id === agentId;
}

/** How an agent of the run is shown (its host name, a CI job). */
export async function agentName(sql: Tx, runId: number, agentId: number): Promise<string | null> {
  const [row] = await sql<{ name: string }[]>`select name from test_run_agents where test_run_id = ${runId} and id = ${agentId}`;
  return row?.name ?? null;
}

export interface CrashedUnit {
  unit: number;
  runner_project: string;
  file: string;
  crashes: number;
  crash_errors: string[];
  /** Its shard has ended already (its reporter ended it meanwhile, or a crash before): nothing to record. */
  done: boolean;
}

/** The unit locked for its crash to be recorded; null when the run has no such unit. */
export async function lockUnit(sql: Tx, runId: number, unit: number): Promise<CrashedUnit | null> {
  const [row] = await sql<CrashedUnit[]>`
    select u.unit, u.runner_project, u.file, u.crashes, u.crash_errors,
           exists (select 1 from test_run_shards s where s.test_run_id = u.test_run_id and s.shard = u.unit and s.status is not null) as done
    from test_run_units u where u.test_run_id = ${runId} and u.unit = ${unit} for update`;
  return row ?? null;
}

/**
 * Records a crash of the unit on the agent. The first (`retry`) frees the unit for another agent at
 * once; a later one keeps it leased to the agent until its shard is ended `crashed`.
 */
export async function recordCrash(sql: Tx, runId: number, unit: number, agentId: number, reason: string, retry: boolean, now: Date): Promise<void> {
  await sql`
    update test_run_units set crashes = crashes + 1, crashed_agent_id = ${agentId}, crashed_at = ${now},
      crash_errors = array_append(crash_errors, ${reason}::text)
      ${retry ? sql`, agent_id = null, leased_until = null` : sql``}
    where test_run_id = ${runId} and unit = ${unit}`;
}

/** The agent's place in the run's join order (0 for the first) and how many agents joined so far. */
export async function joinOrder(sql: Tx, runId: number, agentId: number): Promise<{ index: number; joined: number }> {
  const [row] = await sql<{ index: number; joined: number }[]>`
    select count(*) filter (where id < ${agentId})::int as index, count(*)::int as joined
    from test_run_agents where test_run_id = ${runId}`;
  return row ?? { index: 0, joined: 1 };
}

/** What an agent checks out and runs for the run: the project's repository, the run's selection, the environment's settings. */
export async function checkoutOf(sql: Tx, runId: number): Promise<Checkout> {
  const [row] = await sql<Checkout[]>`
    select p.repo_url, coalesce(r.test_run_branch, r.build_branch) as branch, r.test_run_head_sha as "commit", r.tags, r.test_case_ids,
           e.runner_projects_match, e.runner_projects_ignore, e.env_files, r.environment_variables_overrides, r.build ->> 'url' as build_url,
           e.playwright_args
    from test_runs r join projects p on p.id = r.project_id join environments e on e.id = r.environment_id
    where r.id = ${runId}`;
  return row as Checkout;
}

/** The run's environment and the order its runs are handed out in. */
export async function orderedEnvironmentOf(sql: Tx, runId: number): Promise<{ id: number; order_strategy: string } | null> {
  const [row] = await sql<{ id: number; order_strategy: string }[]>`
    select e.id, e.order_strategy from test_runs r join environments e on e.id = r.environment_id where r.id = ${runId}`;
  return row ?? null;
}

export interface AgentsRun {
  state: RunState;
  environment_id: number;
  planned: boolean;
}

/** The project's run served by agents, locked against its end (key share) until the transaction ends; null when it is none. */
export async function lockAgentsRun(sql: Tx, projectId: number, runId: number): Promise<AgentsRun | null> {
  const [run] = await sql<AgentsRun[]>`
    select state, environment_id, planned_at is not null as planned from test_runs
    where project_id = ${projectId} and id = ${runId} and distribution = 'agents' for key share`;
  return run ?? null;
}

/** The state of the project's run served by agents, read without a lock (an agent asks it every second); null when it is none. */
export async function agentsRunState(sql: Tx, projectId: number, runId: number): Promise<{ state: RunState; cancelled_by: string | null } | null> {
  const [run] = await sql<{ state: RunState; cancelled_by: string | null }[]>`
    select state, cancelled_by from test_runs where project_id = ${projectId} and id = ${runId} and distribution = 'agents'`;
  return run ?? null;
}

/** How many units the run was planned in (its shards). */
export async function plannedUnits(sql: Tx, runId: number): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select total_shards as n from test_runs where id = ${runId}`;
  return row?.n ?? 0;
}

/** Runs of agents not planned yet, still open, whose every agent was last seen before `since`, with their agents' names. */
export async function unplannedRunsSilentSince(sql: Tx, since: Date): Promise<{ id: number; agents: string[] }[]> {
  return sql<{ id: number; agents: string[] }[]>`
    select r.id, array_agg(a.name order by a.id) as agents
    from test_runs r join test_run_agents a on a.test_run_id = r.id
    where r.distribution = 'agents' and r.planned_at is null and r.state in ('pending', 'queued', 'running')
    group by r.id
    having max(a.last_seen_at) < ${since}`;
}
