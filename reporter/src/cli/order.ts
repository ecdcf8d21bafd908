// `proctor-ci order`: likely failures first (issue 56) where the CI runs Playwright itself. Proctor
// answers what its history says of the environment's tests; the suite is listed here (its new tests
// are known only here); the ranking is the server's own (../runs/order.ts). Playwright runs a
// `--test-list`'s tests in its own file order (a list selects, it does not order), so the order is
// applied in two phases: the likely failures, then the rest.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConnectBudget, getJson, type TransportOptions } from '../api/transport.ts';
import type { TestOrderAnswer } from '../api/wire.ts';
import type { RunnerListedTest } from '../reporter/list.ts';
import { ciRevision } from '../runs/ci.ts';
import { longerFirst, NEW_TEST, type OrderReason, ORDER_STRATEGIES, rankByRisk, type TestHistory } from '../runs/order.ts';
import { changedTests, type ChangedTests } from '../toolchain/affected.ts';
import { hasTestList, listTests, playwrightVersion, testListLine } from '../toolchain/playwright.ts';
import { EXIT, exitCodeOf, type ExitCode, openCommand, UsageError } from './exit.ts';

export const ORDER_USAGE = `usage: proctor-ci order --environment SLUG [--branch B] [--strategy duration|failures-first] [--out DIR] [--json] [-- PLAYWRIGHT_ARGS...]
  Writes the order of this build's tests for a CI that runs Playwright itself: Proctor's history of
  the environment (GET /api/test-order: failed in the last run of the branch, else of its mainline;
  failure rate and flaky score) and the suite as its Playwright lists it here (tests Proctor never
  saw are new), in the environment's order strategy (--strategy another). Into DIR (default
  .proctor-order):
    first.txt        a --test-list file of the tests likely to fail, likeliest first
    order.txt        a --test-list file of every test, in order
    first-files.txt  the files of first.txt, one a line; rest-files.txt the other files
    order.json       the order with each test's reasons
  Playwright runs a list's tests in its own file order, so run the likely failures first, then the
  rest, as one run of two shards (PROCTOR_RUN_KEY, or the CI's build, joins them):
    PROCTOR_SHARD=1 PROCTOR_TOTAL_SHARDS=2 npx playwright test --test-list DIR/first.txt
    PROCTOR_SHARD=2 PROCTOR_TOTAL_SHARDS=2 npx playwright test --test-list-invert DIR/first.txt
  (--test-list is Playwright 1.56's; before it, give first-files.txt's files, then rest-files.txt's,
  as file filters.) PLAYWRIGHT_ARGS (--config, --project, --grep) choose what is listed.
  From the environment: PROCTOR_URL, PROCTOR_API_KEY, PROCTOR_PROJECT_ID (a personal key),
  PROCTOR_ENVIRONMENT, PROCTOR_BRANCH (else the CI's). Exit code: 0 written, 2 refused, 3 Proctor
  could not be reached.`;

interface OrderSettings {
  transport: TransportOptions;
  query: URLSearchParams;
  out: string;
  json: boolean;
  playwrightArgs: string[];
}

function parseOrderSettings(args: string[], env: NodeJS.ProcessEnv): OrderSettings {
  const dashes = args.indexOf('--');
  let parsed;
  try {
    parsed = parseArgs({
      args: dashes < 0 ? args : args.slice(0, dashes),
      options: {
        environment: { type: 'string' },
        branch: { type: 'string' },
        strategy: { type: 'string' },
        out: { type: 'string' },
        json: { type: 'boolean' },
      },
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values } = parsed;
  const environment = values.environment ?? env.PROCTOR_ENVIRONMENT;
  if (!environment) throw new UsageError("--environment is required (the environment's slug), or PROCTOR_ENVIRONMENT");
  if (values.strategy !== undefined && !(ORDER_STRATEGIES as readonly string[]).includes(values.strategy))
    throw new UsageError(`--strategy must be one of ${ORDER_STRATEGIES.join(', ')}, not "${values.strategy}"`);
  const url = env.PROCTOR_URL?.trim().replace(/\/+$/, '');
  const apiKey = env.PROCTOR_API_KEY?.trim();
  if (!url || !apiKey) throw new UsageError('PROCTOR_URL and PROCTOR_API_KEY name the Proctor server and its key (a CI secret)');
  const query = new URLSearchParams({ environment });
  const branch = values.branch ?? ciRevision(env).branch;
  if (branch) query.set('branch', branch);
  if (values.strategy) query.set('strategy', values.strategy);
  return {
    // The order is wanted before the tests start: a few attempts, then the CI runs its suite as it would.
    transport: { url, apiKey, projectId: env.PROCTOR_PROJECT_ID?.trim() || null, maxAttempts: 4, maxBackoffMs: 4000, budget: new ConnectBudget(15_000) },
    query,
    out: values.out ?? '.proctor-order',
    json: Boolean(values.json),
    playwrightArgs: dashes < 0 ? [] : args.slice(dashes + 1),
  };
}

export interface OrderedListing {
  strategy: TestOrderAnswer['data']['strategy'];
  /** Every listed test in order, with why it is likely to fail (empty for none). */
  tests: { test: RunnerListedTest; reasons: OrderReason[]; risk_rank: number | null }[];
  /** The tests of the first phase: those with a reason, in a failures-first order; none in a duration order. */
  first: RunnerListedTest[];
}

/** The listed tests in the answer's order strategy, ranked with ../runs/order.ts from what the server knows of each. */
export function orderListing(listed: RunnerListedTest[], answer: TestOrderAnswer['data'], changed: ReadonlySet<string> | null = null): OrderedListing {
  const known = new Map(answer.tests.map((test) => [test.id, test]));
  const historyOf = (test: RunnerListedTest): TestHistory => {
    const found = known.get(test.id);
    if (!found) return NEW_TEST;
    return {
      failed_last_run: found.failed_last_run,
      new: false,
      changed: changed ? changed.has(test.id) : null,
      failure_rate: found.failure_rate,
      flaky_score: found.flaky_score,
      duration_ms: found.duration_ms,
    };
  };
  const ranked = rankByRisk(listed, historyOf).map((row) => ({ test: row.item, reasons: row.reasons, risk_rank: row.risk_rank }));
  if (answer.strategy === 'duration') {
    const longest = ranked
      .map((row) => ({ ...row, risk_rank: null }))
      .sort((a, b) => longerFirst(historyOf(a.test).duration_ms, historyOf(b.test).duration_ms));
    return { strategy: answer.strategy, tests: longest, first: [] };
  }
  return { strategy: answer.strategy, tests: ranked, first: ranked.filter((row) => row.risk_rank !== null).map((row) => row.test) };
}

/** Writes the order's files into `out`; returns their paths. */
export function writeOrder(
  out: string,
  order: OrderedListing,
  answer: TestOrderAnswer['data'],
): Record<'first' | 'order' | 'firstFiles' | 'restFiles' | 'json', string> {
  fs.mkdirSync(out, { recursive: true });
  const files = {
    first: path.join(out, 'first.txt'),
    order: path.join(out, 'order.txt'),
    firstFiles: path.join(out, 'first-files.txt'),
    restFiles: path.join(out, 'rest-files.txt'),
    json: path.join(out, 'order.json'),
  };
  const lines = (items: string[]) => (items.length > 0 ? `${items.join('\n')}\n` : '');
  const firstFiles = [...new Set(order.first.map((test) => test.file))];
  fs.writeFileSync(files.first, lines(order.first.map(testListLine)));
  fs.writeFileSync(files.order, lines(order.tests.map((row) => testListLine(row.test))));
  fs.writeFileSync(files.firstFiles, lines(firstFiles));
  fs.writeFileSync(files.restFiles, lines([...new Set(order.tests.map((row) => row.test.file))].filter((file) => !firstFiles.includes(file))));
  const document = {
    environment: answer.environment,
    branch: answer.branch,
    strategy: order.strategy,
    last_run: answer.last_run,
    first: order.first.length,
    tests: order.tests.map(({ test, reasons, risk_rank }) => ({
      id: test.id,
      runner_project: test.runner_project,
      file: test.file,
      titles: test.titles,
      reasons,
      risk_rank,
    })),
  };
  fs.writeFileSync(files.json, `${JSON.stringify(document, null, 2)}\n`);
  return files;
}

/**
 * The suite here, as its own Playwright lists it (run as this user: the CI's own checkout), and the
 * tests changed since `base` (the branch's last passing run's commit) as its `--only-changed` says.
 */
async function listHere(playwrightArgs: string[], base: string | null): Promise<{ tests: RunnerListedTest[]; version: string; changed: ChangedTests }> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-order-'));
  fs.mkdirSync(path.join(home, 'tmp'));
  const runner = { user: null, home, modules: null };
  try {
    const dir = process.cwd();
    const listing = await listTests(dir, process.env, runner, playwrightArgs);
    const changed: ChangedTests = base
      ? await changedTests({ dir, env: process.env, runner, playwrightArgs, base })
      : { kind: 'unknown', reason: 'the branch has no passing run with a known commit to compare with' };
    return { tests: listing.tests, version: playwrightVersion(dir, runner), changed };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

const say = (line: string) => process.stderr.write(`proctor: ${line}\n`);

export async function orderCommand(args: string[], env: NodeJS.ProcessEnv): Promise<ExitCode> {
  const opened = openCommand(args, ORDER_USAGE, () => parseOrderSettings(args, env), say);
  if ('exit' in opened) return opened.exit;
  const { settings } = opened;
  let answer: TestOrderAnswer;
  try {
    answer = await getJson<TestOrderAnswer>(settings.transport, `/api/test-order?${settings.query}`);
  } catch (error) {
    say(`the order could not be read: ${(error as Error).message}`);
    return exitCodeOf(error);
  }
  let listed: Awaited<ReturnType<typeof listHere>>;
  try {
    listed = await listHere(settings.playwrightArgs, answer.data.changed_since?.commit ?? null);
  } catch (error) {
    say((error as Error).message);
    return EXIT.error;
  }
  const order = orderListing(listed.tests, answer.data, listed.changed.kind === 'known' ? listed.changed.ids : null);
  const since = answer.data.changed_since;
  if (listed.changed.kind === 'known' && since) {
    say(`${listed.changed.ids.size} tests changed since ${since.commit.slice(0, 12)} (run #${since.run_number}, the branch's last passing run)`);
  } else if (listed.changed.kind === 'unknown') {
    say(`no test is known changed: ${listed.changed.reason}`);
  }
  const files = writeOrder(settings.out, order, answer.data);
  if (settings.json) {
    process.stdout.write(`${fs.readFileSync(files.json, 'utf8')}`);
    return EXIT.passed;
  }
  const count = (reason: OrderReason) => order.tests.filter((row) => row.risk_rank !== null && row.reasons[0] === reason).length;
  const last = answer.data.last_run
    ? ` (last run #${answer.data.last_run.number ?? answer.data.last_run.id} on ${answer.data.last_run.branch ?? 'no branch'})`
    : '';
  say(
    order.strategy === 'duration'
      ? `the environment orders by duration: ${order.tests.length} tests longest first in ${files.order}`
      : `${order.first.length} of ${order.tests.length} tests likely to fail first: ${count('failed_last_run')} failed last time${last}, ${count('new')} new, ${count('changed')} changed, ${order.first.length - count('failed_last_run') - count('new') - count('changed')} by failure rate or flakiness; written to ${settings.out}`,
  );
  if (order.first.length === 0) {
    process.stdout.write('npx playwright test\n');
  } else if (hasTestList(listed.version)) {
    process.stdout.write(`npx playwright test --test-list ${files.first}\nnpx playwright test --test-list-invert ${files.first}\n`);
  } else {
    say(`Playwright ${listed.version} has no --test-list (1.56): the phases are files, ${files.firstFiles} then ${files.restFiles}`);
    process.stdout.write(`npx playwright test $(cat ${files.firstFiles})\nnpx playwright test $(cat ${files.restFiles})\n`);
  }
  return EXIT.passed;
}
