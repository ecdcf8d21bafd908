import type { Logger } from 'pino';
import type { Sql } from '../db.ts';
import { Gauge, registry } from '../metrics.ts';
import { agentLeases, outboxBacklog, unendedRuns } from './gauges-store.ts';

/**
 * The gauges a node reads from the database when it is scraped (the primary's, once per scrape: a
 * few counts on partial indexes). A database that does not answer leaves them as they were, and
 * the scrape still answers: the rest of the metrics say what is wrong.
 */
/** One read shared by the gauges of one scrape (a registry collects its metrics all at once). */
function shared<T>(read: () => Promise<T>): () => Promise<T> {
  let reading: Promise<T> | null = null;
  return () => (reading ??= read().finally(() => (reading = null)));
}

export function registerDatabaseGauges(sql: Sql, logger: Logger, agentLeaseMs: number): void {
  const registers = [registry];
  const failed = (error: unknown) => logger.warn({ err: error }, 'metrics: reading the queues from the database failed');
  const runStates = ['pending', 'queued', 'running'];
  const distributions = ['shards', 'agents'];
  new Gauge({
    name: 'proctor_runs',
    help: 'Runs not yet ended, by state and distribution; pending ones are the executor and agents queue (the database figure: the same on every node)',
    labelNames: ['state', 'distribution'] as const,
    aggregator: 'max',
    registers,
    async collect() {
      const rows = await unendedRuns(sql).catch(failed);
      if (!rows) return;
      for (const state of runStates) for (const distribution of distributions) this.set({ state, distribution }, 0);
      for (const row of rows) this.set({ state: row.state, distribution: row.distribution }, row.runs);
    },
  });
  const backlog = { pending: 0, due: 0, oldest_due_s: 0 };
  const readBacklog = shared(async () => {
    const read = await outboxBacklog(sql).catch(failed);
    if (read) Object.assign(backlog, read);
  });
  new Gauge({
    name: 'proctor_outbox_pending',
    help: "Notification deliveries not yet delivered nor given up (kind=all), and those due now (kind=due): the outbox's backlog",
    labelNames: ['kind'] as const,
    aggregator: 'max',
    registers,
    async collect() {
      await readBacklog();
      this.set({ kind: 'all' }, backlog.pending);
      this.set({ kind: 'due' }, backlog.due);
    },
  });
  new Gauge({
    name: 'proctor_outbox_oldest_due_seconds',
    help: 'How long the oldest notification delivery due has waited for its attempt',
    aggregator: 'max',
    registers,
    async collect() {
      await readBacklog();
      this.set(backlog.oldest_due_s);
    },
  });
  const leases = { leased: 0, agents: 0 };
  const readLeases = shared(async () => {
    const read = await agentLeases(sql, agentLeaseMs).catch(failed);
    if (read) Object.assign(leases, read);
  });
  new Gauge({
    name: 'proctor_agent_leases',
    help: 'Units of runs of agents leased to an agent now',
    aggregator: 'max',
    registers,
    async collect() {
      await readLeases();
      this.set(leases.leased);
    },
  });
  new Gauge({
    name: 'proctor_agents',
    help: 'Agents heard from within a lease time, in runs under way',
    aggregator: 'max',
    registers,
    async collect() {
      await readLeases();
      this.set(leases.agents);
    },
  });
}
