// Wall time of the sample suite with the Proctor reporter (against a live server) over the same
// suite with the list reporter alone, pair by pair in the same run. Target: under 3% overhead.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../test/helpers/process.ts';
import { benchDatabase, benchProject, benchServer, median } from './lib.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const PAIRS = Number(process.env.BENCH_OVERHEAD_PAIRS ?? 4);
const TARGET = 0.03;

async function runSuite(reporters: string, env: Record<string, string>): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(ROOT, 'node_modules/@playwright/test/cli.js'), 'test', `--reporter=${reporters}`], {
    cwd: path.join(ROOT, 'examples'),
    env: { ...process.env, DEMO_SITE_PORT: String(await freePort()), BASE_URL: '', PLAYWRIGHT_BASE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  await new Promise((resolve) => child.on('exit', resolve));
  const elapsed = performance.now() - started;
  if (reporters.includes('reporter/dist') && !/\[proctor\] 14\/14 results delivered/.test(output)) throw new Error(`the reporter did not deliver:\n${output}`);
  return elapsed;
}

async function main(): Promise<void> {
  const reporter = path.join(ROOT, 'reporter/dist/index.js');
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(ROOT, 'reporter/tsconfig.json')], { stdio: 'inherit' });
  const db = await benchDatabase();
  const server = await benchServer(db);
  try {
    const { key } = await benchProject(db.sql, 'local');
    const withReporter = { PROCTOR_URL: server.url, PROCTOR_API_KEY: key, PROCTOR_ENVIRONMENT: 'local' };
    await runSuite('list', {});
    const ratios: number[] = [];
    const rows: string[] = [];
    for (let pair = 0; pair < PAIRS; pair++) {
      // Alternate which goes first, so drift over the run does not favour either.
      const order = pair % 2 === 0 ? ['list', 'proctor'] : ['proctor', 'list'];
      const times: Record<string, number> = {};
      for (const which of order) {
        times[which] = which === 'list' ? await runSuite('list', {}) : await runSuite(`list,${reporter}`, withReporter);
      }
      const ratio = (times.proctor as number) / (times.list as number) - 1;
      ratios.push(ratio);
      rows.push(`  pair ${pair + 1}: list ${((times.list as number) / 1000).toFixed(2)} s, list + proctor ${((times.proctor as number) / 1000).toFixed(2)} s, overhead ${(ratio * 100).toFixed(1)}%`);
    }
    const overhead = median(ratios);
    console.log(`bench/reporter-overhead: the sample suite (10 tests, 14 attempts), ${PAIRS} pairs, reporter against a live server`);
    for (const row of rows) console.log(row);
    console.log(`  median overhead: ${(overhead * 100).toFixed(1)}% (target under ${TARGET * 100}%: ${overhead < TARGET ? 'met' : 'NOT met'})`);
  } finally {
    await server.close();
    await db.close();
  }
}

await main();
