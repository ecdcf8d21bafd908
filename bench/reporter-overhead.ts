// Wall time of the sample suite with the Proctor reporter (against a live server) over the same
// suite with the list reporter alone, pair by pair in the same run. Target: under 3% overhead.
// Twice: as the sample suite is, and with screenshots, traces and videos of its failures recorded
// (in both arms) and uploaded by the reporter (BENCH_OVERHEAD_VARIANTS, comma-separated, picks:
// `plain`, `artifacts`; both unless given).
import fs from 'node:fs';
import path from 'node:path';
import { videoEnv } from '../test/helpers/playwright.ts';
import { benchDatabase, benchProject, benchServer, hodgesLehmann, settleWrites } from './lib.ts';
import { buildReporter, EXAMPLES, REPORTER, ROOT, timeSampleSuite } from './suite.ts';

const TARGET = 0.03;
// One suite run varies by 2–5% on a 2-core machine (its 8 Chromium starts), and a pair's two runs
// often differ by more than the overhead they measure: ten pairs give a steady estimate, four the
// least that CI's time allows (BENCH_OVERHEAD_SECONDS=600 on request).
const MAX_PAIRS = Number(process.env.BENCH_OVERHEAD_PAIRS ?? 10);
const MIN_PAIRS = Math.min(MAX_PAIRS, 4);
// On a slow machine each variant's pairs stop at this budget, once MIN_PAIRS are in, to keep CI in its time.
const BUDGET_MS = Number(process.env.BENCH_OVERHEAD_SECONDS ?? 120) * 1000;
const VARIANTS = (process.env.BENCH_OVERHEAD_VARIANTS ?? 'plain,artifacts').split(',');

type Arm = 'list' | 'proctor';

interface Variant {
  name: 'plain' | 'artifacts';
  label: string;
  /** Arguments after `playwright test`. */
  args: string[];
  env: Record<string, string>;
  /** What the reporter's attachments line must say, if anything. */
  uploads: RegExp | null;
}

/** The sample suite's config with every failure's screenshot, trace and video kept. */
function artifactsConfig(): string {
  const dir = path.join(ROOT, '.tmp');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'bench-artifacts.config.ts');
  fs.writeFileSync(
    file,
    `import base from ${JSON.stringify(path.join(EXAMPLES, 'playwright.config.ts'))};
export default {
  ...base,
  testDir: ${JSON.stringify(path.join(EXAMPLES, 'tests'))},
  use: { ...base.use, screenshot: 'only-on-failure', trace: 'retain-on-failure', video: 'retain-on-failure' },
  webServer: { ...base.webServer, cwd: ${JSON.stringify(EXAMPLES)} },
};
`,
  );
  return file;
}

async function runSuite(variant: Variant, reporters: string, env: Record<string, string>): Promise<number> {
  const { ms: elapsed, output } = await timeSampleSuite(variant.args, reporters, { ...variant.env, ...env });
  if (reporters.includes('reporter/dist')) {
    if (!/\[proctor\] 14\/14 results delivered/.test(output)) throw new Error(`the reporter did not deliver:\n${output}`);
    if (variant.uploads && !variant.uploads.test(output)) throw new Error(`the reporter did not upload the attachments:\n${output}`);
  }
  return elapsed;
}

async function main(): Promise<void> {
  const reporter = REPORTER;
  buildReporter();
  const variants: Variant[] = [
    { name: 'plain', label: 'the sample suite (10 tests, 14 attempts)', args: [], env: {}, uploads: null },
    {
      name: 'artifacts',
      label: 'the same with screenshot, trace and video of every failure (artifacts: failures)',
      args: ['--config', artifactsConfig()],
      env: videoEnv(),
      // Every attachment of the failures delivered: some uploaded, none left behind.
      uploads: /\[proctor\] [1-9]\d* attachment\(s\) uploaded \([^)]+\), \d+ already stored\s*$/m,
    },
  ];
  const db = await benchDatabase();
  const server = await benchServer(db);
  try {
    const { key } = await benchProject(db.sql, 'local');
    const withReporter = { PROCTOR_URL: server.url, PROCTOR_API_KEY: key, PROCTOR_ENVIRONMENT: 'local' };
    for (const variant of variants.filter((v) => VARIANTS.includes(v.name))) {
      const run = (arm: Arm) => (arm === 'list' ? runSuite(variant, 'list', {}) : runSuite(variant, `list,${reporter}`, withReporter));
      await measure(variant.label, run, db.sql);
    }
  } finally {
    await server.close();
    await db.close();
  }
}

async function measure(label: string, run: (arm: Arm) => Promise<number>, sql: Parameters<typeof settleWrites>[0]): Promise<void> {
  // What an earlier bench left unwritten would otherwise be written back during the pairs.
  await settleWrites(sql);
  // Once, untimed, with the reporter: it warms what both arms run (Playwright's caches, Chromium,
  // the site) and the server's request paths, which a long-running server has long since compiled.
  await run('proctor');
  const started = performance.now();
  const overheads: number[] = [];
  const rows: string[] = [];
  for (let pair = 0; pair < MAX_PAIRS && (pair < MIN_PAIRS || performance.now() - started < BUDGET_MS); pair++) {
    // Alternate which goes first, so drift over the run does not favour either.
    const order: Arm[] = pair % 2 === 0 ? ['list', 'proctor'] : ['proctor', 'list'];
    const times = { list: 0, proctor: 0 };
    for (const arm of order) times[arm] = await run(arm);
    const overhead = times.proctor / times.list - 1;
    overheads.push(overhead);
    rows.push(
      `  pair ${pair + 1}: list ${(times.list / 1000).toFixed(2)} s, list + proctor ${(times.proctor / 1000).toFixed(2)} s, overhead ${percent(overhead)}`,
    );
  }
  const estimate = hodgesLehmann(overheads);
  console.log(`bench/reporter-overhead: ${label}, ${overheads.length} pairs, reporter against a live server`);
  for (const row of rows) console.log(row);
  console.log(
    `  overhead (Hodges–Lehmann estimate over the pairs): ${percent(estimate)} (target under ${TARGET * 100}%: ${estimate < TARGET ? 'met' : 'NOT met'})`,
  );
}

function percent(ratio: number): string {
  return `${(ratio * 100).toFixed(1)}%`;
}

await main();
