import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { AppDeps, Clock } from '../context.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import type { Sql } from '../db.ts';
import { HttpError, notFound } from '../http/errors.ts';
import { isTerminal } from '../states.ts';
import { advance, formatPosition, parsePosition, presentProgress } from './live.ts';
import { resultsAfter, runProgress, runPulse, runRowsOf, type RunsListFilter } from './live-store.ts';
import { runParams } from './schema.ts';
import { releaseStreamSlot, renewStreamSlots, takeStreamSlot } from './streams-store.ts';
import * as store from './store.ts';

/** Where a live stream starts, when no Last-Event-ID says: a page's position (`data-live-from`). */
export const liveQuery = z
  .object({
    from: z
      .string()
      .max(50_000)
      .regex(/^\d{1,20}(\.\d{1,20})*$/)
      .optional()
      .describe("the position to start from (an event's id); Last-Event-ID, when sent, wins; absent: from the run's first result"),
  })
  .strict();

/** Who holds a stream, for the limit of streams at once: the key, else the person of the session. */
export function streamClient(principal: { kind: string; keyId?: string | null; userId?: string }): string {
  return principal.keyId ? `key:${principal.keyId}` : `user:${principal.userId ?? ''}`;
}

/** A runs list's stream: the runs it shows under way, and (`after`) the newest it shows, with its filter, to be sent the runs made since. */
export const runsListQuery = z
  .object({
    runs: z
      .string()
      .regex(/^([1-9]\d{0,9}(,[1-9]\d{0,9}){0,49})?$/)
      .optional()
      .describe('the runs shown under way, by id, comma-separated (at most 50): their state and counts as they move'),
    after: z.coerce
      .number()
      .int()
      .min(0)
      .max(2_147_483_647)
      .optional()
      .describe("the newest run shown, by id (0: none): the project's runs made after it that the filter shows are sent too, and the stream stays open"),
    environment: z.string().max(200).optional().describe('the filter of the new runs: an environment, by slug'),
    branch: z.string().max(500).optional().describe('the filter of the new runs: a branch'),
    state: z.enum(['', 'pending', 'queued', 'running', 'passed', 'failed', 'error', 'cancelled']).optional().describe('the filter of the new runs: a state'),
    owner: z.string().max(200).optional().describe('the filter of the new runs: an owner (`@org/team`), sent once a run has a failed or flaky test it owns'),
  })
  .strict();

/** What a runs list's stream watches, from its query. */
export function runsListOf(query: z.infer<typeof runsListQuery>): RunsList {
  return {
    runIds: query.runs ? query.runs.split(',').map(Number) : [],
    after: query.after ?? null,
    filter: {
      environment: query.environment || undefined,
      branch: query.branch || undefined,
      state: query.state || undefined,
      owner: query.owner || undefined,
    },
  };
}

export function liveRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql } = deps;
  addRoute(ctx, {
    method: 'get',
    path: '/api/test-runs/events',
    tag: 'Test runs',
    summary:
      "The project's runs list as server-sent events: a `run` event with a run's row (number, state, environment, branch, commit, counts, when made) each time the runs given under way move, and for each run made after `after` that the filter shows, as it is made and as it moves; without `after`, an `end` event once none of the runs given is under way, then the stream closes",
    query: runsListQuery,
    produces: 'text/event-stream',
    fails: { 429: 'This key or person holds as many live streams at once as it may' },
    handler: async ({ query, scope, req, res }) => {
      await streamRunsList(deps, req, res, streamClient(scope.principal), scope.projectId, runsListOf(query));
    },
  });
  addRoute(ctx, {
    method: 'get',
    path: '/api/test-runs/:id/events',
    run: ({ params }) => params.id,
    tag: 'Test runs',
    summary:
      "A run's results as they are stored, as server-sent events: `progress` events (the results stored since the last, and the run's progress: tests done of total, failures, time left), each with an id that Last-Event-ID resumes from without loss or repeat; an `end` event when the run ends, then the stream closes",
    params: runParams,
    query: liveQuery,
    produces: 'text/event-stream',
    fails: { 429: 'This key or person holds as many live streams at once as it may' },
    handler: async ({ params, query, scope, req, res }) => {
      const run = await store.getRunById(sql, params.id);
      if (!run || run.project_id !== scope.projectId) throw notFound('test run');
      await streamRun(deps, req, res, streamClient(scope.principal), run.id, query.from);
    },
  });
}

// The streams themselves: server-sent events written to the response (see live.ts for positions).

export const LIVE_POLL_MS = 250;
export const HEARTBEAT_MS = 15_000;
/** Streams one client (a person, a key) may hold open at once, across the cluster: a page each. */
export const STREAMS_PER_CLIENT = 8;

const responses = new Set<Response>();

/** Every stream of this process ended (the server is closing): their clients reconnect elsewhere. */
export function endLiveStreams(): void {
  for (const res of responses) res.end();
  responses.clear();
}

/** This process, as the rows of its streams name it (for an operator reading the table). */
const NODE = `${os.hostname()}:${process.pid}`;

/**
 * This process's places in the cluster's count of open streams (streams-store.ts): each stream's
 * row renewed every third of the expiry while the stream is open, deleted when it closes. Rows of a
 * process that died stop counting once expired (PROCTOR_LIVE_STREAM_TTL_S).
 */
class StreamSlots {
  private readonly held = new Set<string>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly ttlMs: number,
  ) {}

  /** A place for a stream of `client`: its id, or null when the client holds its share already. */
  async take(client: string): Promise<string | null> {
    const id = randomUUID();
    if (!(await takeStreamSlot(this.sql, { id, client, node: NODE }, STREAMS_PER_CLIENT, this.ttlMs))) return null;
    this.held.add(id);
    this.timer ??= setInterval(() => void this.renew(), Math.max(250, this.ttlMs / 3)).unref();
    return id;
  }

  release(id: string, log: Logger | undefined): void {
    if (!this.held.delete(id)) return;
    if (this.held.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
    // Not released (the database away): the row stops counting once it expires.
    releaseStreamSlot(this.sql, id).catch((error: unknown) => log?.warn({ err: error }, 'releasing a live stream failed'));
  }

  private async renew(): Promise<void> {
    try {
      await renewStreamSlots(this.sql, [...this.held], this.ttlMs);
    } catch {
      // The next renewal tries again; until then the rows keep their expiry.
    }
  }
}

const slotsOfDatabase = new WeakMap<Sql, StreamSlots>();

function slotsOf(deps: LiveDeps): StreamSlots {
  let slots = slotsOfDatabase.get(deps.sql);
  if (!slots) {
    slots = new StreamSlots(deps.sql, deps.config.liveStreamTtlMs);
    slotsOfDatabase.set(deps.sql, slots);
  }
  return slots;
}

interface Stream {
  write(event: string | null, data: unknown, id?: string): void;
  wait(ms: number): Promise<void>;
  closed(): boolean;
  end(): void;
}

/** Opens an event stream on `res` for `client`; refused when the client holds its share of streams already. */
async function openStream(deps: LiveDeps, client: string, req: Request, res: Response): Promise<Stream> {
  const slots = slotsOf(deps);
  const log = res.locals.log as Logger | undefined;
  let closed = false;
  let slot: string | null = null;
  let wake: (() => void) | null = null;
  let lastWrite = Date.now();
  const close = () => {
    if (closed) return;
    closed = true;
    responses.delete(res);
    if (slot !== null) slots.release(slot, log);
    wake?.();
  };
  req.on('close', close);
  res.on('close', close);
  slot = await slots.take(client);
  if (slot === null) {
    closed = true;
    throw new HttpError(429, `at most ${STREAMS_PER_CLIENT} live streams at once per person or key: close a page showing a run under way`);
  }
  // The client went while its place was being taken: the place is given back at once.
  if (closed) {
    slots.release(slot, log);
    return { write: () => {}, wait: async () => {}, closed: () => true, end: () => {} };
  }
  responses.add(res);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    // A proxy that buffers answers (nginx) passes this one on as it comes.
    'x-accel-buffering': 'no',
    connection: 'keep-alive',
  });
  // A client reconnects a second after a disconnect, with the last event's id.
  res.write('retry: 1000\n\n');
  return {
    write(event, data, id) {
      if (closed) return;
      res.write(`${id !== undefined ? `id: ${id}\n` : ''}${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
      lastWrite = Date.now();
    },
    async wait(ms) {
      if (!closed && Date.now() - lastWrite >= HEARTBEAT_MS) {
        // A comment: proxies see traffic and keep the connection; EventSource ignores it.
        res.write(': keep-alive\n\n');
        lastWrite = Date.now();
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    },
    closed: () => closed,
    end() {
      res.end();
      close();
    },
  };
}

export interface LiveDeps {
  sql: Sql;
  clock: Clock;
  config: { liveStreamTtlMs: number };
}

/**
 * A run's stream: `progress` events, each with the results stored since the last and the run's
 * progress, an id naming the position; an `end` event once the run ended, then the stream closes.
 * Starts at `Last-Event-ID`, else at `from` (a page's position), else at the run's first result.
 */
export async function streamRun(deps: LiveDeps, req: Request, res: Response, client: string, runId: number, from: string | undefined): Promise<void> {
  const given = req.get('last-event-id') ?? from;
  let position = given === undefined ? { horizon: '0', seen: [] } : parsePosition(given);
  if (!position) throw new HttpError(400, 'header.last-event-id: not a position this stream gave (digits separated by dots)');
  const stream = await openStream(deps, client, req, res);
  let shown = '';
  try {
    while (!stream.closed()) {
      const pulse = await runPulse(deps.sql, runId);
      if (!pulse) break;
      const moved = `${pulse.state}:${pulse.total_count}:${pulse.failed_count}:${pulse.last_activity_at?.getTime() ?? ''}`;
      if (moved !== shown) {
        shown = moved;
        const read = await resultsAfter(deps.sql, runId, position.horizon, position.seen);
        const progress = await runProgress(deps.sql, runId, deps.clock());
        position = advance(position, read.horizon, read.results);
        stream.write(
          'progress',
          { results: read.results.map(({ xid: _, ...result }) => result), progress: progress && presentProgress(progress) },
          formatPosition(position),
        );
        // The run's end waits for the batches under way, so that what ended shows every result.
        if (isTerminal(pulse.state)) {
          stream.write('end', { state: pulse.state });
          break;
        }
      }
      await stream.wait(LIVE_POLL_MS);
    }
  } catch (error) {
    // The client reconnects and resumes from its last event; the error is the log's.
    (res.locals.log as Logger | undefined)?.warn({ err: error, runId }, 'live run stream failed');
  } finally {
    stream.end();
  }
}

/** The runs a list's stream watches: those listed under way, and the runs made after `after` that its filter shows. */
export interface RunsList {
  runIds: number[];
  /** The newest run the list showed (0: none); null: no new run is sent, and the stream ends with the listed runs. */
  after: number | null;
  filter: RunsListFilter;
}

/** Runs a list's stream watches at most: a page lists 50, the newest of those made since are kept. */
const WATCHED_AT_MOST = 100;

/**
 * The runs list's stream: a `run` event with a run's row each time it moves, for the listed runs
 * and (with `after`) the runs made since the list was read that its filter shows, which stay
 * watched once sent. Without `after`, an `end` event once none of the listed runs is under way.
 * Each event says it all: a reconnect needs no id (it sends each watched run once more).
 */
export async function streamRunsList(deps: LiveDeps, req: Request, res: Response, client: string, projectId: number, list: RunsList): Promise<void> {
  const stream = await openStream(deps, client, req, res);
  const shown = new Map<number, string>();
  let watched = [...new Set(list.runIds)];
  try {
    while (!stream.closed()) {
      const runs = await runRowsOf(deps.sql, projectId, watched, list.after, list.filter);
      for (const run of runs) {
        const now = `${run.state}:${run.success_count}:${run.failed_count}:${run.flaky_count}:${run.total_count}`;
        if (shown.get(run.id) === now) continue;
        shown.set(run.id, now);
        stream.write('run', run);
      }
      if (list.after !== null) {
        // A new run stays watched once sent, whether or not the filter still shows it.
        watched = [...new Set([...watched, ...runs.map((run) => run.id)])].sort((a, b) => b - a).slice(0, WATCHED_AT_MOST);
      } else if (runs.every((run) => isTerminal(run.state))) {
        stream.write('end', {});
        break;
      }
      await stream.wait(LIVE_POLL_MS * 4);
    }
  } catch (error) {
    (res.locals.log as Logger | undefined)?.warn({ err: error, projectId }, 'live runs list stream failed');
  } finally {
    stream.end();
  }
}
