// A JUnit XML file of 100,000 testcases uploaded the way `proctor-ci upload junit` uploads it (the
// same client: a multipart body streamed from disk) to `proctor serve` on PostgreSQL, read as it
// streams and stored, against a raw COPY of the same rows (the run's tests and their results, one
// COPY each, one transaction) in the same run. Each round is a new build of the same suite: its
// tests are known, its commit is new. Target: at least 60% of COPY's rate. And the server's memory
// is flat in the file's size: a file four times as large (400,000 testcases, 45 MB), and a file of
// 100 MB (testcases with long output, as a suite that logs writes them), are each stored whole by a
// server whose processes may each hold no more than HEAP_MB of JavaScript heap, less than the file
// would take as text. (Its resident memory's growth is printed too: without a cap, the collector
// lets the heap grow with the length of any busy spell, whatever is kept.) BENCH_JUNIT_LARGE=0
// leaves the two large files out (to profile the rounds alone).
import fs from 'node:fs';
import path from 'node:path';
import { multipartFiles } from '../reporter/src/cli/multipart.ts';
import { postStream } from '../reporter/src/api/transport.ts';
import type { JunitUploadAnswer } from '../reporter/src/api/wire.ts';
import { attemptsOf, junitTestId, listedTest } from '../server/src/junit/attempts.ts';
import { type JunitCase, JunitReader } from '../server/src/junit/read.ts';
import { copyRows } from '../server/src/db.ts';
import { RESULT_COLUMNS, resultRow } from '../server/src/runs/results.ts';
import type { Attempt } from '../server/src/runs/schema.ts';
import type { ListedTest } from '../server/src/testcases/schema.ts';
import { ROOT } from '../test/helpers/playwright.ts';
import { benchDatabase, benchProject, benchServerProcess, median, settleWrites, watchMemory } from './lib.ts';

const TESTCASES = Number(process.env.BENCH_JUNIT_TESTCASES ?? 100_000);
const ROUNDS = Number(process.env.BENCH_JUNIT_ROUNDS ?? 3);
const TARGET = 0.6;
const LARGE = process.env.BENCH_JUNIT_LARGE !== '0';
/** The size of the 100 MB file, under the server's default upload limit (100 MiB). */
const HUNDRED_MB = 100_000_000;
const HEAP_MB = 96;

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

/**
 * A file of `bytes` of testcases that each log a few KB (the output of a chatty suite: request
 * logs, SQL), every 20th failing. Returns how many testcases it holds.
 */
function writeLoggingFile(file: string, bytes: number): number {
  const out = fs.openSync(file, 'w');
  let written = 0;
  const write = (text: string) => {
    fs.writeSync(out, text);
    written += Buffer.byteLength(text);
  };
  const line = (n: number, i: number) =>
    `${new Date(Date.UTC(2026, 10, 26, 8, 0, 0, n + i)).toISOString()} INFO  request ${n}.${i} GET /api/items?page=${i} 200 in ${(n * 7 + i) % 300} ms\n`;
  write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n');
  let n = 0;
  for (; written < bytes - 4096; n++) {
    const cls = `com.acme.logged.module${Math.floor(n / 1000)}.Feature${Math.floor(n / 10) % 100}Test`;
    if (n % 1000 === 0) write(`${n > 0 ? '</testsuite>\n' : ''}<testsuite name="com.acme.logged.module${n / 1000}" timestamp="2026-11-26T08:00:00Z">\n`);
    const log = Array.from({ length: 24 }, (_, i) => line(n, i)).join('');
    const failure =
      n % 20 === 0
        ? `<failure message="expected: &lt;${n}&gt; but was: &lt;${n + 1}&gt;" type="org.opentest4j.AssertionFailedError">org.opentest4j.AssertionFailedError\n\tat ${cls}.handlesCase(Test.java:${n % 300})</failure>`
        : '';
    write(`  <testcase name="logs case ${n}" classname="${cls}" time="0.${(n % 900) + 100}">${failure}<system-out>${log}</system-out></testcase>\n`);
  }
  write('</testsuite>\n</testsuites>\n');
  fs.closeSync(out);
  return n;
}

/**
 * The result rows `writeJunitFile` writes for `testcases`: a row a testcase, and one more for each
 * flaky one's failed run (every 200th from the second: odd, so neither a failure nor a skip).
 * Counted from how the file is written, not by reading it: the large file is not parsed twice.
 */
function resultRowsOf(testcases: number): number {
  return testcases + (testcases >= 2 ? Math.floor((testcases - 2) / 200) + 1 : 0);
}

/** The rows the server stores for a file, read here with the server's own reader, for COPY: the run's tests and their attempts. */
function rowsIn(file: string): { tests: ListedTest[]; attempts: Attempt[] } {
  const attempts: Attempt[] = [];
  const tests: ListedTest[] = [];
  let group: JunitCase[] = [];
  const close = () => {
    if (group.length > 0) {
      tests.push(listedTest(group[0] as JunitCase));
      attempts.push(...attemptsOf(group));
    }
    group = [];
  };
  const reader = new JunitReader(path.basename(file), (testcase) => {
    if (group.length > 0 && junitTestId(group[0] as JunitCase) !== junitTestId(testcase)) close();
    group.push(testcase);
  });
  reader.write(fs.readFileSync(file, 'utf8'));
  reader.end();
  close();
  return { tests, attempts };
}

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error('bench/junit needs DATABASE_URL (a PostgreSQL server): COPY is its baseline');
  const began = performance.now();
  const dir = path.join(ROOT, '.tmp', 'bench-junit');
  fs.mkdirSync(dir, { recursive: true });
  const db = await benchDatabase();
  const server = await benchServerProcess(db);
  try {
    const project = await benchProject(db.sql);
    const transport = { url: server.url, apiKey: project.key, projectId: null, maxAttempts: 1, maxBackoffMs: 0 };

    /** One upload of `file` as its own run; rows stored per second, and the servers' peak memory growth. */
    async function upload(file: string, expected: number, commit: string, to = server): Promise<{ rate: number; growthMb: number }> {
      const body = multipartFiles([file]);
      const query = new URLSearchParams({ environment: 'bench', commit });
      const before = watchMemory(to.pid as number).stop().peakSumMb;
      const memory = watchMemory(to.pid as number);
      const started = performance.now();
      let answer: Awaited<ReturnType<typeof postStream<JunitUploadAnswer>>>;
      let peakMb: number;
      try {
        answer = await postStream<JunitUploadAnswer>(
          { ...transport, url: to.url },
          `/api/test-runs/junit?${query}`,
          body.contentType,
          () => body.open(),
          body.size,
        );
      } finally {
        peakMb = memory.stop().peakSumMb;
      }
      const seconds = (performance.now() - started) / 1000;
      const growthMb = peakMb - before;
      const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from test_results where test_run_id = ${answer.data.test_run.id}`;
      if (stored?.n !== expected) throw new Error(`expected ${expected} stored results, found ${stored?.n}`);
      return { rate: expected / seconds, growthMb };
    }

    /** The same rows by COPY, into a run of their own: COPY at its best, a statement a table, one commit. */
    async function copy({ tests, attempts }: { tests: ListedTest[]; attempts: Attempt[] }): Promise<number> {
      const [run] = await db.sql<{ id: number }[]>`
        insert into test_runs (project_id, environment_id, state, origin, total_shards, created_at)
        values (${project.projectId}, ${project.environmentId}, 'running', 'reporter', 1, now()) returning id`;
      const runId = run?.id as number;
      const listed = tests.map((t) => [runId, t.id, project.projectId, t.title, t.file_path, t.runner_project]);
      const results = attempts.map((a) => resultRow(runId, 1, a, new Set()));
      const started = performance.now();
      await db.sql.begin(async (tx) => {
        await copyRows(tx, 'test_run_tests', ['test_run_id', 'test_case_id', 'project_id', 'title', 'file_path', 'runner_project'], listed);
        await copyRows(tx, 'test_results', RESULT_COLUMNS, results);
      });
      return attempts.length / ((performance.now() - started) / 1000);
    }

    const file = path.join(dir, 'suite.xml');
    writeJunitFile(file, TESTCASES, 'suite');
    const rows = rowsIn(file);
    if (rows.attempts.length !== resultRowsOf(TESTCASES)) throw new Error(`the file holds ${rows.attempts.length} result rows, not ${resultRowsOf(TESTCASES)}`);
    const large = path.join(dir, 'large.xml');
    if (LARGE) writeJunitFile(large, TESTCASES * 4, 'large');
    const largeRows = resultRowsOf(TESTCASES * 4);
    const largeMb = LARGE ? (fs.statSync(large).size / 2 ** 20).toFixed(0) : '45';
    const megabytes = fs.statSync(file).size / 2 ** 20;
    const commit = (round: number) => `${round}`.padStart(40, 'c');

    // An untimed round first: the suite's tests become known, the server's workers compile their hot paths.
    await upload(file, rows.attempts.length, commit(0));
    await copy(rows);
    await settleWrites(db.sql);
    const uploads: number[] = [];
    const copies: number[] = [];
    const growths: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const timed = await upload(file, rows.attempts.length, commit(round));
      uploads.push(timed.rate);
      growths.push(timed.growthMb);
      copies.push(await copy(rows));
    }
    // The large files, each a new run on a server whose processes' heap is capped.
    let larger: { rate: number; growthMb: number } | Error | null = null;
    let hundred: { testcases: number; bytes: number; seconds: number; growthMb: number } | Error | null = null;
    if (LARGE) {
      const capped = await benchServerProcess(db, {}, [`--max-old-space-size=${HEAP_MB}`]);
      try {
        larger = await upload(large, largeRows, commit(ROUNDS + 1), capped).catch((error: Error) => error);
        fs.rmSync(large, { force: true });
        const logged = path.join(dir, 'hundred.xml');
        const testcases = writeLoggingFile(logged, HUNDRED_MB);
        const bytes = fs.statSync(logged).size;
        const started = performance.now();
        hundred = await upload(logged, testcases, commit(ROUNDS + 2), capped)
          .then(({ growthMb }) => ({ testcases, bytes, seconds: (performance.now() - started) / 1000, growthMb }))
          .catch((error: Error) => error);
      } finally {
        await capped.close();
      }
    }

    const ratio = median(uploads) / median(copies);
    const growth = median(growths);
    const fmt = (rate: number) => Math.round(rate).toLocaleString('en');
    console.log(
      `bench/junit: a file of ${TESTCASES.toLocaleString('en')} testcases (${megabytes.toFixed(1)} MB, ${rows.attempts.length.toLocaleString('en')} result rows), ${ROUNDS} rounds after 1 untimed (PostgreSQL; HTTP workers: auto)`,
    );
    console.log(`  upload (multipart, streamed, stored) : median ${fmt(median(uploads))} rows/s (rounds: ${uploads.map(fmt).join(', ')})`);
    console.log(`  raw COPY of the same rows (tests, results): median ${fmt(median(copies))} rows/s (rounds: ${copies.map(fmt).join(', ')})`);
    console.log(
      `  ratio                                : ${(ratio * 100).toFixed(1)}% of COPY (target ${TARGET * 100}%: ${ratio >= TARGET ? 'met' : 'NOT met'})`,
    );
    console.log(`  server memory growth while storing   : ${growth.toFixed(0)} MB for ${TESTCASES.toLocaleString('en')} testcases (median of the rounds)`);
    const largeTitle = `  ${(TESTCASES * 4).toLocaleString('en')} testcases (${largeMb} MB), heap capped at ${HEAP_MB} MB a process`;
    if (larger === null) console.log(`${largeTitle}: not run (BENCH_JUNIT_LARGE=0)`);
    else if (larger instanceof Error) console.log(`${largeTitle}: failed (${larger.message}): NOT met`);
    else {
      console.log(
        `${largeTitle}: stored whole, ${Math.round(larger.rate).toLocaleString('en')} rows/s, memory growth ${larger.growthMb.toFixed(0)} MB (target: stored: met)`,
      );
    }
    const hundredTitle = `  a 100 MB file, heap capped at ${HEAP_MB} MB a process`;
    if (hundred === null) console.log(`${hundredTitle}: not run (BENCH_JUNIT_LARGE=0)`);
    else if (hundred instanceof Error) console.log(`${hundredTitle}: failed (${hundred.message}): NOT met`);
    else {
      console.log(
        `${hundredTitle}: ${(hundred.bytes / 1e6).toFixed(1)} MB (${hundred.testcases.toLocaleString('en')} testcases, ${Math.round(hundred.bytes / hundred.testcases).toLocaleString('en')} bytes each) stored whole in ${hundred.seconds.toFixed(1)} s, memory growth ${hundred.growthMb.toFixed(0)} MB (target: stored: met)`,
      );
    }
    console.log(`  bench/junit's own time               : ${((performance.now() - began) / 1000).toFixed(0)} s`);
  } finally {
    await server.close();
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
