// A JUnit XML file of 100,000 testcases uploaded the way `proctor-ci upload junit` uploads it (the
// same client: a multipart body streamed from disk) to `proctor serve` on PostgreSQL, read as it
// streams and stored, against a raw COPY of the same result rows into the same table in the same
// run. Target: at least 40% of COPY's rows per second. And the server's memory stays flat in the
// file's size: its peak growth while storing a file four times larger stays under 1.5 times.
import fs from 'node:fs';
import path from 'node:path';
import { multipartFiles } from '../reporter/src/cli/multipart.ts';
import { postStream } from '../reporter/src/transport.ts';
import type { JunitUploadAnswer } from '../reporter/src/wire.ts';
import { attemptsOf, junitTestId } from '../server/src/junit/attempts.ts';
import { type JunitCase, JunitReader } from '../server/src/junit/read.ts';
import { copyRows } from '../server/src/db.ts';
import { RESULT_COLUMNS, resultRow } from '../server/src/runs/results.ts';
import type { Attempt } from '../server/src/runs/schema.ts';
import { ROOT } from '../test/helpers/playwright.ts';
import { benchDatabase, benchProject, benchServerProcess, median, settleWrites, watchMemory } from './lib.ts';

const TESTCASES = Number(process.env.BENCH_JUNIT_TESTCASES ?? 100_000);
const ROUNDS = Number(process.env.BENCH_JUNIT_ROUNDS ?? 3);
const TARGET = 0.4;
const MEMORY_GROWTH_LIMIT = 1.5;

/**
 * A file as a large JVM suite writes it: 100 classes per testsuite, a failure with a stack in
 * every 50th testcase, a skip in every 40th, a flaky rerun in every 200th, output in every 10th.
 */
function writeJunitFile(file: string, testcases: number, salt: string): void {
  const out = fs.openSync(file, 'w');
  const write = (text: string) => fs.writeSync(out, text);
  write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n');
  for (let n = 0; n < testcases; n++) {
    const cls = `com.acme.${salt}.module${Math.floor(n / 1000)}.Feature${Math.floor(n / 10) % 100}Test`;
    if (n % 1000 === 0) write(`${n > 0 ? '</testsuite>\n' : ''}<testsuite name="com.acme.${salt}.module${n / 1000}" timestamp="2026-11-26T08:00:00Z">\n`);
    const open = `  <testcase name="handles case ${n}" classname="${cls}" time="0.${(n % 900) + 100}"`;
    if (n % 50 === 0) {
      write(
        `${open}>\n    <failure message="expected: &lt;${n}&gt; but was: &lt;${n + 1}&gt;" type="org.opentest4j.AssertionFailedError">org.opentest4j.AssertionFailedError: expected: &lt;${n}&gt; but was: &lt;${n + 1}&gt;\n\tat ${cls}.handlesCase(${cls.split('.').at(-1)}.java:${n % 300})\n\tat java.base/java.lang.reflect.Method.invoke(Method.java:580)\n</failure>\n    <system-out>request ${n} failed</system-out>\n  </testcase>\n`,
      );
    } else if (n % 40 === 0) write(`${open}>\n    <skipped message="disabled on this platform"/>\n  </testcase>\n`);
    else if (n % 200 === 1)
      write(`${open}>\n    <flakyFailure message="Timeout after 100ms" type="java.util.concurrent.TimeoutException" time="0.1"/>\n  </testcase>\n`);
    else if (n % 10 === 0) write(`${open}>\n    <system-out>step ${n} done</system-out>\n  </testcase>\n`);
    else write(`${open}/>\n`);
  }
  write('</testsuite>\n</testsuites>\n');
  fs.closeSync(out);
}

/** The result rows the server stores for a file: read here with the server's own reader, for COPY. */
function attemptsIn(file: string): Attempt[] {
  const attempts: Attempt[] = [];
  let group: JunitCase[] = [];
  const close = () => {
    if (group.length > 0) attempts.push(...attemptsOf(group));
    group = [];
  };
  const reader = new JunitReader(path.basename(file), (testcase) => {
    if (group.length > 0 && junitTestId(group[0] as JunitCase) !== junitTestId(testcase)) close();
    group.push(testcase);
  });
  reader.write(fs.readFileSync(file, 'utf8'));
  reader.end();
  close();
  return attempts;
}

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error('bench/junit needs DATABASE_URL (a PostgreSQL server): COPY is its baseline');
  const dir = path.join(ROOT, '.tmp', 'bench-junit');
  fs.mkdirSync(dir, { recursive: true });
  const db = await benchDatabase();
  const server = await benchServerProcess(db);
  try {
    const project = await benchProject(db.sql);
    const transport = { url: server.url, apiKey: project.key, projectId: null, maxAttempts: 1, maxBackoffMs: 0 };

    /** One upload of `file` as its own run; rows stored per second, and the servers' peak memory growth. */
    async function upload(file: string, expected: number): Promise<{ rate: number; growthMb: number }> {
      const body = multipartFiles([file]);
      const before = watchMemory(server.pid as number).stop().peakSumMb;
      const memory = watchMemory(server.pid as number);
      const started = performance.now();
      const answer = await postStream<JunitUploadAnswer>(transport, '/api/test-runs/junit?environment=bench', body.contentType, () => body.open(), body.size);
      const seconds = (performance.now() - started) / 1000;
      const growthMb = memory.stop().peakSumMb - before;
      const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from test_results where test_run_id = ${answer.data.test_run.id}`;
      if (stored?.n !== expected) throw new Error(`expected ${expected} stored results, found ${stored?.n}`);
      return { rate: expected / seconds, growthMb };
    }

    /** The same rows by one COPY, into a run of their own: COPY at its best, one statement, one commit. */
    async function copy(attempts: Attempt[]): Promise<number> {
      const [run] = await db.sql<{ id: number }[]>`
        insert into test_runs (project_id, environment_id, state, origin, total_shards, created_at)
        values (${project.projectId}, ${project.environmentId}, 'running', 'reporter', 1, now()) returning id`;
      const rows = attempts.map((a) => resultRow(run?.id as number, 1, a, new Set()));
      const started = performance.now();
      await db.sql.begin((tx) => copyRows(tx, 'test_results', RESULT_COLUMNS, rows));
      return attempts.length / ((performance.now() - started) / 1000);
    }

    const files = Array.from({ length: ROUNDS + 1 }, (_, round) => {
      const file = path.join(dir, `round-${round}.xml`);
      writeJunitFile(file, TESTCASES, `r${round}`);
      return { file, attempts: attemptsIn(file) };
    });
    const quarter = path.join(dir, 'quarter.xml');
    writeJunitFile(quarter, TESTCASES / 4, 'quarter');
    const quarterAttempts = attemptsIn(quarter).length;
    const megabytes = fs.statSync(files[0]?.file as string).size / 2 ** 20;
    await settleWrites(db.sql);

    // An untimed round first: the server's workers compile their hot paths.
    await upload(files[0]?.file as string, files[0]?.attempts.length as number);
    await copy(files[0]?.attempts as Attempt[]);
    const uploads: number[] = [];
    const copies: number[] = [];
    const growths: number[] = [];
    for (const { file, attempts } of files.slice(1)) {
      const timed = await upload(file, attempts.length);
      uploads.push(timed.rate);
      growths.push(timed.growthMb);
      copies.push(await copy(attempts));
    }
    const small = await upload(quarter, quarterAttempts);

    const ratio = median(uploads) / median(copies);
    const growth = median(growths);
    const fmt = (rate: number) => Math.round(rate).toLocaleString('en');
    console.log(
      `bench/junit: a file of ${TESTCASES.toLocaleString('en')} testcases (${megabytes.toFixed(1)} MB, ${files[0]?.attempts.length.toLocaleString('en')} result rows), ${ROUNDS} rounds after 1 untimed (PostgreSQL; HTTP workers: auto)`,
    );
    console.log(`  upload (multipart, streamed, stored) : median ${fmt(median(uploads))} rows/s (rounds: ${uploads.map(fmt).join(', ')})`);
    console.log(`  raw COPY of the same rows            : median ${fmt(median(copies))} rows/s (rounds: ${copies.map(fmt).join(', ')})`);
    console.log(
      `  ratio                                : ${(ratio * 100).toFixed(1)}% of COPY (target ${TARGET * 100}%: ${ratio >= TARGET ? 'met' : 'NOT met'})`,
    );
    const flat = growth < Math.max(small.growthMb, 16) * MEMORY_GROWTH_LIMIT;
    console.log(
      `  server memory growth while storing   : ${small.growthMb.toFixed(0)} MB for ${(TESTCASES / 4).toLocaleString('en')} testcases, ${growth.toFixed(0)} MB for ${TESTCASES.toLocaleString('en')} ` +
        `(target: under ${MEMORY_GROWTH_LIMIT} times the smaller file's, or 16 MB: ${flat ? 'met' : 'NOT met'})`,
    );
  } finally {
    await server.close();
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
