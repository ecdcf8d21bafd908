// Badge requests per second over HTTP on loopback, against the same server answering a static
// response, measured in the same run, rounds interleaved. Target: cached badges at least 50% of
// the static route's requests per second.
import { execFile } from 'node:child_process';
import path from 'node:path';
import express from 'express';
import { loadConfig } from '../server/src/config.ts';
import { createLogger } from '../server/src/logger.ts';
import { FileStorage } from '../server/src/storage/blobs.ts';
import { serveInProcess } from '../test/helpers/app.ts';
import { benchDatabase, benchProject, median } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_BADGE_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_BADGE_SECONDS ?? 3);
const CONNECTIONS = 16;
const TARGET = 0.5;
const ROOT = path.resolve(import.meta.dirname, '..');

function load(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/http-load.ts'), url, String(CONNECTIONS), String(SECONDS)], (error, stdout) => {
      if (error) return reject(error);
      const result = JSON.parse(stdout) as { requests: number; seconds: number; statuses: Record<string, number> };
      if (Object.keys(result.statuses).some((status) => status !== '200')) return reject(new Error(`unexpected statuses ${JSON.stringify(result.statuses)}`));
      resolve(result.requests / result.seconds);
    });
  });
}

async function main(): Promise<void> {
  const db = await benchDatabase();
  try {
    const { projectId, environmentId } = await benchProject(db.sql, 'production');
    await db.sql`
      insert into test_runs (project_id, environment_id, state, origin, success_count, total_count, run_started_at, run_ended_at)
      values (${projectId}, ${environmentId}, 'passed', 'api', 120, 120, now(), now())`;
    const config = loadConfig({ PORT: '0', DATABASE_URL: db.url, PROCTOR_SIGNING_SECRET: 'bench-signing-secret-0123456789', LOG_LEVEL: 'silent' });
    let staticBody = '';
    // The same server: one Express app, its static route in front of Proctor's.
    const server = await serveInProcess(
      {
        sql: db.sql,
        config,
        logger: createLogger('silent'),
        clock: () => new Date(),
        signingSecret: 'bench-signing-secret-0123456789',
        storage: new FileStorage(path.join(ROOT, '.tmp/bench-files')),
      },
      (app) => {
        const outer = express();
        outer.get('/static', (_req, res) => {
          res.setHeader('content-type', 'image/svg+xml; charset=utf-8');
          res.end(staticBody);
        });
        outer.use(app);
        return outer;
      },
    );
    const base = server.url;
    const badgeUrl = `${base}/badges/${projectId}/production.svg`;
    staticBody = await (await fetch(badgeUrl)).text();

    await load(`${base}/static`);
    await load(badgeUrl);
    const staticRates: number[] = [];
    const badgeRates: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      staticRates.push(await load(`${base}/static`));
      badgeRates.push(await load(badgeUrl));
    }
    await server.close();
    const ratio = median(badgeRates) / median(staticRates);
    const fmt = (rates: number[]) => rates.map((r) => Math.round(r).toLocaleString('en')).join(', ');
    console.log(`bench/badge: ${CONNECTIONS} keep-alive connections from another process, ${ROUNDS} interleaved rounds of ${SECONDS} s`);
    console.log(`  static route  : median ${Math.round(median(staticRates)).toLocaleString('en')} req/s (rounds: ${fmt(staticRates)})`);
    console.log(`  cached badge  : median ${Math.round(median(badgeRates)).toLocaleString('en')} req/s (rounds: ${fmt(badgeRates)})`);
    console.log(`  ratio         : ${(ratio * 100).toFixed(1)}% of the static route (target ${TARGET * 100}%: ${ratio >= TARGET ? 'met' : 'NOT met'})`);
  } finally {
    await db.close();
  }
}

await main();
