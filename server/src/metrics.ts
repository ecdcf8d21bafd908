// Prometheus metrics (prom-client): what each process counts, and how a node's processes (the
// primary and its HTTP workers) add theirs up into the one answer its metrics port gives.
import cluster from 'node:cluster';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** One metric with its values, as a registry gives it in JSON (and the aggregator takes it). */
type MetricJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>[number];

export { Gauge };

/** This process's metrics; the primary adds its workers' to them when scraped. */
export const registry = new Registry();
const registers = [registry];

/** Seconds: from a cached answer (a millisecond) to a slow page or a long upload. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const httpRequestSeconds = new Histogram({
  name: 'proctor_http_request_duration_seconds',
  help: 'HTTP requests answered, by method, route pattern and status, and how long each took to answer (to the last byte sent)',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers,
});

export const httpRequestsInFlight = new Gauge({
  name: 'proctor_http_requests_in_flight',
  help: 'HTTP requests being answered now',
  registers,
});

export const resultsIngested = new Counter({
  name: 'proctor_results_ingested_total',
  help: 'Test results (attempts) stored, by how they came: reporter batches (batch) or uploaded reports (upload)',
  labelNames: ['source'] as const,
  registers,
});

export const groupCommitBatches = new Histogram({
  name: 'proctor_group_commit_batches',
  help: 'Result batches written together in one group-commit transaction',
  buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
  registers,
});

export const groupCommitAttempts = new Histogram({
  name: 'proctor_group_commit_attempts',
  help: 'Attempts written in one group-commit transaction',
  buckets: [1, 5, 10, 50, 100, 250, 500, 1000, 2500, 5000],
  registers,
});

export const groupCommitSeconds = new Histogram({
  name: 'proctor_group_commit_write_seconds',
  help: 'How long a group-commit transaction took, from its BEGIN to its COMMIT',
  buckets: LATENCY_BUCKETS,
  registers,
});

export const dbPoolMax = new Gauge({
  name: 'proctor_db_pool_max_connections',
  help: "The connections the database pools may open (PROCTOR_DB_POOL_MAX, shared by a node's processes)",
  registers,
});

export const dbConnectionsOpen = new Gauge({
  name: 'proctor_db_connections_open',
  help: 'Connections to the database open now',
  registers,
});

export const dbTransactionsActive = new Gauge({
  name: 'proctor_db_transactions_active',
  help: 'Connections held by a transaction now (sql.begin and reserved connections): the busiest part of the pool',
  registers,
});

export const dbPoolWaitSeconds = new Histogram({
  name: 'proctor_db_pool_wait_seconds',
  help: 'How long a transaction waited for its connection from the pool (its BEGIN answered included)',
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers,
});

export const executorSlots = new Gauge({
  name: 'proctor_executor_slots',
  help: 'Runs the executor may run at once (PROCTOR_EXECUTOR_CONCURRENCY)',
  registers,
});

export const executorSlotsBusy = new Gauge({
  name: 'proctor_executor_slots_busy',
  help: 'Runs the executor runs now (static shards, or a run of agents it serves as one)',
  registers,
});

export const executorRunsClaimed = new Counter({
  name: 'proctor_executor_runs_claimed_total',
  help: 'Runs the executor claimed, by distribution (shards, agents)',
  labelNames: ['distribution'] as const,
  registers,
});

export const agentLeasesGranted = new Counter({
  name: 'proctor_agent_leases_granted_total',
  help: 'Units of runs of agents leased to an agent',
  registers,
});

export const outboxDeliveries = new Counter({
  name: 'proctor_outbox_deliveries_total',
  help: 'Notification delivery attempts, by outcome: delivered, retry (failed, tried again later) or failed (given up)',
  labelNames: ['outcome'] as const,
  registers,
});

export const retentionPasses = new Counter({
  name: 'proctor_retention_passes_total',
  help: 'Retention passes finished, by outcome (ok, error)',
  labelNames: ['outcome'] as const,
  registers,
});

export const retentionResultsDeleted = new Counter({
  name: 'proctor_retention_results_deleted_total',
  help: 'Results deleted by retention passes, counted chunk by chunk as a pass goes',
  registers,
});

export const retentionRunsDeleted = new Counter({
  name: 'proctor_retention_runs_deleted_total',
  help: 'Runs whose results (kind=results) or attachments only (kind=artifacts) retention deleted',
  labelNames: ['kind'] as const,
  registers,
});

export const retentionLastPassSeconds = new Gauge({
  name: 'proctor_retention_last_pass_seconds',
  help: 'How long the last retention pass took',
  aggregator: 'max',
  registers,
});

export const retentionLastPassTimestamp = new Gauge({
  name: 'proctor_retention_last_pass_timestamp_seconds',
  help: 'When the last retention pass ended (Unix time)',
  aggregator: 'max',
  registers,
});

/**
 * Node's own: the event loop's delay (nodejs_eventloop_lag_*), memory (process_resident_memory_bytes,
 * nodejs_heap_*), CPU, garbage collection. Only where metrics are served: the loop's monitor costs a little.
 */
export function collectProcessMetrics(): void {
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
}

interface MetricsRequest {
  type: 'metrics-request';
  id: number;
}
interface MetricsAnswer {
  type: 'metrics-answer';
  id: number;
  metrics: MetricJson[];
}

/** An HTTP worker answers its primary's asks for its metrics. */
export function answerMetricsRequests(): void {
  process.on('message', (message: unknown) => {
    const ask = message as MetricsRequest | null;
    if (ask?.type !== 'metrics-request') return;
    void registry.getMetricsAsJSON().then((metrics) => process.send?.({ type: 'metrics-answer', id: ask.id, metrics } satisfies MetricsAnswer));
  });
}

/** A worker that does not answer in this long (busy, or dying) is left out of one scrape. */
const WORKER_ANSWER_MS = 2000;
let asks = 0;

function askWorker(worker: NonNullable<typeof cluster.workers>[string]): Promise<MetricJson[] | null> {
  if (!worker?.isConnected()) return Promise.resolve(null);
  const id = ++asks;
  return new Promise((resolve) => {
    const done = (metrics: MetricJson[] | null) => {
      clearTimeout(timer);
      worker.off('message', listen);
      worker.off('exit', gone);
      resolve(metrics);
    };
    const listen = (message: unknown) => {
      const answer = message as MetricsAnswer | null;
      if (answer?.type === 'metrics-answer' && answer.id === id) done(answer.metrics);
    };
    const gone = () => done(null);
    const timer = setTimeout(gone, WORKER_ANSWER_MS);
    worker.on('message', listen);
    worker.once('exit', gone);
    worker.send({ type: 'metrics-request', id } satisfies MetricsRequest, (error: Error | null) => error && gone());
  });
}

/**
 * The node's metrics in Prometheus's text format: this process's, and in a primary those of each
 * HTTP worker added up (counters and histograms summed, gauges as each one says: summed unless told).
 */
export async function nodeMetrics(): Promise<{ contentType: string; text: string }> {
  const workers = cluster.isPrimary ? Object.values(cluster.workers ?? {}) : [];
  if (workers.length === 0) return { contentType: registry.contentType, text: await registry.metrics() };
  const answers = await Promise.all([registry.getMetricsAsJSON(), ...workers.map(askWorker)]);
  const aggregated = AggregatorRegistry.aggregate(answers.filter((metrics): metrics is MetricJson[] => metrics !== null));
  return { contentType: aggregated.contentType, text: await aggregated.metrics() };
}
