// What a CI job pays while Proctor is down: the sample suite with the reporter against a live server,
// against a port nothing listens on (refused), against a host name that does not resolve, and with
// a malformed URL, each the median of a few runs in the same invocation. Target: a job with the server
// down takes at most PROCTOR_CONNECT_BUDGET_S (default 10 s) longer than with it up, and a malformed
// URL costs nothing.
import { freePort } from '../test/helpers/process.ts';
import { benchDatabase, benchProject, benchServer, median } from './lib.ts';
import { buildReporter, REPORTER, timeSampleSuite } from './suite.ts';

const RUNS = Number(process.env.BENCH_REPORTER_DOWN_RUNS ?? 2);
const BUDGET_S = 10;
// One run of the suite varies by a few per cent of its ~20 s on two cores.
const NOISE_S = 2;

interface Variant {
  label: string;
  url: string;
  /** The reporter's last line must say this. */
  says: RegExp;
  /** Seconds it may add to the job. */
  allowedS: number;
}

async function timed(variant: Variant, key: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const { ms, output } = await timeSampleSuite([], `list,${REPORTER}`, { PROCTOR_URL: variant.url, PROCTOR_API_KEY: key, PROCTOR_ENVIRONMENT: 'local' });
    const last = output.trim().split('\n').pop() ?? '';
    if (!variant.says.test(last)) throw new Error(`${variant.label}: the reporter's last line is not as expected:\n${last}`);
    times.push(ms);
  }
  return median(times) / 1000;
}

async function main(): Promise<void> {
  buildReporter();
  const db = await benchDatabase();
  const server = await benchServer(db);
  try {
    const { key } = await benchProject(db.sql, 'local');
    const up: Variant = { label: 'server up', url: server.url, says: /^\[proctor\] \d+ attachment|results delivered to run #\d+/, allowedS: 0 };
    const down: Variant[] = [
      {
        label: 'nothing listening (refused)',
        url: `http://127.0.0.1:${await freePort()}`,
        says: /gave up: the server could not be reached \(ECONNREFUSED/,
        allowedS: BUDGET_S,
      },
      {
        label: 'host name that does not resolve',
        url: 'http://proctor.invalid',
        says: /gave up: the server could not be reached \((ENOTFOUND|EAI_AGAIN|CONNECT_TIMEOUT)/,
        allowedS: BUDGET_S,
      },
      { label: 'malformed URL (htp://)', url: 'htp://proctor.example.com', says: /results not uploaded: .*not an http:\/\/ or https:\/\/ URL/, allowedS: 0 },
    ];
    // Once, untimed: Playwright's caches, Chromium and the site warm up.
    await timeSampleSuite([], 'list', {});
    const upS = await timed(up, key);
    console.log(`bench/reporter-down: the sample suite with the reporter, median of ${RUNS} runs each, budget ${BUDGET_S} s (PROCTOR_CONNECT_BUDGET_S)`);
    console.log(`  server up                        : ${upS.toFixed(1)} s`);
    for (const variant of down) {
      const seconds = await timed(variant, key);
      const added = seconds - upS;
      const met = added <= variant.allowedS + NOISE_S;
      console.log(
        `  ${variant.label.padEnd(33)}: ${seconds.toFixed(1)} s, ${added.toFixed(1)} s added (target at most ${variant.allowedS} s, with ${NOISE_S} s for the runs' own spread: ${met ? 'met' : 'NOT met'})`,
      );
    }
  } finally {
    await server.close();
    await db.close();
  }
}

await main();
