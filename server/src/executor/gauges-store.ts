import type { Sql } from '../db.ts';

// What the node's metrics read from the database when scraped: the queues that live there, the
// same for every node of a cluster (a dashboard takes their max over the nodes, not their sum).

/** Runs not yet ended, by state (pending: waiting for an executor or agents) and distribution. */
export async function unendedRuns(sql: Sql): Promise<{ state: string; distribution: string; runs: number }[]> {
  return sql<{ state: string; distribution: string; runs: number }[]>`
    select state, distribution, count(*)::int as runs from test_runs
    where state in ('pending', 'queued', 'running') group by state, distribution`;
}

/** The notifications' outbox: deliveries pending, those due now, and how long the oldest due one has waited. */
export async function outboxBacklog(sql: Sql): Promise<{ pending: number; due: number; oldest_due_s: number }> {
  const [row] = await sql<{ pending: number; due: number; oldest_due_s: number }[]>`
    select count(*)::int as pending, count(*) filter (where next_attempt_at <= now())::int as due,
           coalesce(extract(epoch from now() - min(next_attempt_at) filter (where next_attempt_at <= now())), 0)::float8 as oldest_due_s
    from notification_deliveries where state = 'pending'`;
  return row ?? { pending: 0, due: 0, oldest_due_s: 0 };
}

/** Runs of agents under way: their units leased now, and the agents heard from within a lease time. */
export async function agentLeases(sql: Sql, leaseMs: number): Promise<{ leased: number; agents: number }> {
  const [row] = await sql<{ leased: number; agents: number }[]>`
    select
      (select count(*)::int from test_run_units u join test_runs r on r.id = u.test_run_id
        where r.state in ('pending', 'queued', 'running') and u.leased_until > now()) as leased,
      (select count(*)::int from test_run_agents a join test_runs r on r.id = a.test_run_id
        where r.state in ('pending', 'queued', 'running') and a.last_seen_at > now() - make_interval(secs => ${leaseMs / 1000})) as agents`;
  return row ?? { leased: 0, agents: 0 };
}
