import { gzipSync } from 'node:zlib';
import type { Sql } from 'postgres';
import { expect } from 'vitest';
import type { WireAttempt } from '../../reporter/src/api/wire.ts';
import { attempt, attemptsOf, listedTest } from '../helpers/attempts.ts';
import { testId } from '../helpers/server.ts';

// CI shards reporting through the balancer as the reporter does: a run joined by its build's run
// key, the shard's tests listed, a gzipped batch of attempts at a time, then its end; each request
// sent again, unchanged, when it is refused at the door, cut off or answered 502/503/504 (the
// reporter's rule), so that what a client was told is stored can be held against the database.

export interface ShardLoad {
  runs: number;
  shardsPerRun: number;
  testsPerShard: number;
  /** The pause between a shard's batches. */
  batchMs: number;
  batchSize: number;
}

export interface Offered {
  /** Per run key: its run's id and the attempts whose batch was answered 2xx, as `test_id:retry`. */
  acknowledged: Map<string, { runId: number; attempts: Set<string>; tests: number }>;
  requests: number;
  /** Requests sent again after a refusal, a cut or a 502/503/504. */
  retried: number;
  /** Requests that never got a 2xx (with what they got last). */
  failed: string[];
}

const RETRYABLE = new Set([0, 502, 503, 504]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function offerShards(url: string, key: string, load: ShardLoad, label: string): Promise<Offered> {
  const offered: Offered = { acknowledged: new Map(), requests: 0, retried: 0, failed: [] };

  const send = async (path: string, body: unknown, gzip = false): Promise<{ status: number; json: any }> => {
    const raw = Buffer.from(JSON.stringify(body));
    const payload = gzip ? gzipSync(raw) : raw;
    const deadline = Date.now() + 90_000;
    let last = 'not sent';
    for (let attemptNo = 0; Date.now() < deadline; attemptNo++) {
      if (attemptNo > 0) {
        offered.retried++;
        await sleep(Math.min(2000, 200 * attemptNo));
      }
      offered.requests++;
      let status = 0;
      try {
        const response = await fetch(`${url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
          body: payload,
          signal: AbortSignal.timeout(20_000),
        });
        status = response.status;
        const text = await response.text();
        if (status >= 200 && status < 300) return { status, json: JSON.parse(text) };
        last = `${status} ${text.slice(0, 200)}`;
      } catch (error) {
        last = `no answer: ${(error as Error).message}`;
      }
      if (!RETRYABLE.has(status)) break;
    }
    offered.failed.push(`${path}: ${last}`);
    return { status: -1, json: null };
  };

  const shard = async (run: number, shardNo: number) => {
    const runKey = `${label}-${run}`;
    const ids = Array.from({ length: load.testsPerShard }, (_, i) => testId(run * 100_000 + shardNo * 1000 + i));
    const attempts: WireAttempt[] = ids.flatMap((id, i) =>
      i % 10 === 3 ? attemptsOf(id, 'unexpected') : i % 10 === 7 ? attemptsOf(id, 'flaky') : [attempt(id)],
    );
    const joined = await send('/api/test-runs/report', { environment: 'cluster', run_key: runKey, total_shards: load.shardsPerRun });
    if (!joined.json) return;
    const runId = joined.json.data.test_run.id as number;
    const entry = offered.acknowledged.get(runKey) ?? { runId, attempts: new Set<string>(), tests: 0 };
    offered.acknowledged.set(runKey, entry);
    const begun = await send(`/api/test-runs/${runId}/shards/${shardNo}/begin`, { tests: ids.map((id) => listedTest(id)), complete: false });
    if (!begun.json) return;
    entry.tests += ids.length;
    for (let i = 0; i < attempts.length; i += load.batchSize) {
      const batch = attempts.slice(i, i + load.batchSize);
      const stored = await send(`/api/test-runs/${runId}/results`, { shard: shardNo, results: batch }, true);
      if (stored.json) for (const a of batch) entry.attempts.add(`${a.test_id}:${a.retry}`);
      await sleep(load.batchMs);
    }
    await send(`/api/test-runs/${runId}/shards/${shardNo}/end`, { status: 'failed' });
  };

  const shards: Promise<void>[] = [];
  for (let run = 0; run < load.runs; run++) {
    for (let s = 1; s <= load.shardsPerRun; s++) shards.push(sleep(Math.random() * 1000).then(() => shard(run, s)));
  }
  await Promise.all(shards);
  return offered;
}

/**
 * Every acknowledged attempt stored once, every run ended with its counts equal to its rows (one in
 * ten of a shard's tests fails, one in ten is flaky); answers how many were acknowledged and stored,
 * and how many of them were lost or doubled (each 0 when the check passed).
 */
export async function expectNothingLost(sql: Sql, offered: Offered): Promise<{ acknowledged: number; rows: number; lost: number; doubled: number }> {
  let acknowledged = 0;
  let total = 0;
  let lost = 0;
  let doubled = 0;
  expect(offered.failed).toEqual([]);
  for (const [runKey, run] of offered.acknowledged) {
    const rows = await sql<{ test_case_id: string; retry: number }[]>`select test_case_id, retry from test_results where test_run_id = ${run.runId}`;
    const kept = new Set(rows.map((row) => `${row.test_case_id}:${row.retry}`));
    const missing = [...run.attempts].filter((a) => !kept.has(a));
    acknowledged += run.attempts.size;
    total += rows.length;
    lost += missing.length;
    doubled += rows.length - kept.size;
    expect(rows.length, `${runKey}: rows`).toBe(kept.size);
    expect(missing, `${runKey}: acknowledged but not stored`).toEqual([]);
    const [counts] = await sql<{ state: string; total_count: number; failed_count: number; flaky_count: number }[]>`
      select state, total_count, failed_count, flaky_count from test_runs where id = ${run.runId}`;
    expect(counts!.state, runKey).toBe('failed');
    expect(counts!.total_count, `${runKey}: total`).toBe(run.tests);
    expect(counts!.failed_count, `${runKey}: failed`).toBe(run.tests / 10);
    expect(counts!.flaky_count, `${runKey}: flaky`).toBe(run.tests / 10);
  }
  return { acknowledged, rows: total, lost, doubled };
}
