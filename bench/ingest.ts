// Results per second through the HTTP ingestion path (`proctor serve` as it runs by default: its
// own process with an HTTP worker per core, fed by the reporter's own client: gzip, one batch per
// request, two in flight) against a raw COPY of the same rows into the same table, measured in the
// same run. Target: HTTP at least 40% of COPY's rows per second, batches of 500.
import os from 'node:os';
import { BATCH, compareIngestion, IN_FLIGHT, preloadHistory } from './ingestion.ts';
import { benchDatabase, benchProject, benchServerProcess } from './lib.ts';

const BATCHES = Number(process.env.BENCH_INGEST_BATCHES ?? 40);
// This machine's COPY alone swings 75k-145k rows/s from one round to the next: the medians need rounds.
const ROUNDS = Number(process.env.BENCH_INGEST_ROUNDS ?? 11);
const TARGET = 0.4;
/** Rows already in test_results when the timing starts. */
const HISTORY = Number(process.env.BENCH_INGEST_HISTORY ?? 200_000);

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error('bench/ingest needs DATABASE_URL (a PostgreSQL server): the embedded database has no COPY FROM STDIN');
  const db = await benchDatabase();
  const server = await benchServerProcess(db);
  try {
    const project = await benchProject(db.sql);
    await preloadHistory(db, project.projectId, project.environmentId, HISTORY);
    const { http, copy, httpRates, copyRates } = await compareIngestion(db, server, { ...project, environmentSlug: 'bench' }, BATCHES, ROUNDS);
    const ratio = http / copy;
    const fmt = (rate: number) => Math.round(rate).toLocaleString('en');
    console.log(
      `bench/ingest: ${BATCH * BATCHES} results in batches of ${BATCH}, ${IN_FLIGHT} in flight, ${ROUNDS} interleaved rounds, ` +
        `test_results holding ${HISTORY.toLocaleString('en')} earlier rows (PostgreSQL; HTTP workers: auto, ${os.availableParallelism()} cores)`,
    );
    console.log(`  HTTP ingestion : median ${fmt(http)} results/s (rounds: ${httpRates.map(fmt).join(', ')})`);
    console.log(`  raw COPY       : median ${fmt(copy)} rows/s (rounds: ${copyRates.map(fmt).join(', ')})`);
    console.log(`  ratio          : ${(ratio * 100).toFixed(1)}% of COPY (target ${TARGET * 100}%: ${ratio >= TARGET ? 'met' : 'NOT met'})`);
  } finally {
    await server.close();
    await db.close();
  }
}

await main();
