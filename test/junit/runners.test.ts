import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { jestJunit, nodeTestJunit, playwrightJunit, pytestJunit, type RunnerOutput, vitestJunit } from '../helpers/junit-runners.ts';
import { ROOT } from '../helpers/playwright.ts';
import { waitForRollups } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, type TestServer } from '../helpers/server.ts';

// JUnit XML written by real runners, each from a suite of a passing, a failing, a skipped and
// (where the runner retries) a flaky test, uploaded with `proctor-ci upload junit` and read back
// through the API: what the runner reported is what Proctor shows.

const exec = promisify(execFile);

let server: TestServer;
let api: ReturnType<typeof client>;
let key: string;
let environmentIds: Record<string, number>;
const outputs: Record<string, RunnerOutput> = {};

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProject(server.sql);
  key = project.key;
  api = client(server.url, key);
  environmentIds = {
    unit: await seedEnvironment(server.sql, project.projectId, 'unit'),
    nightly: await seedEnvironment(server.sql, project.projectId, 'nightly'),
  };
  for (const produce of [playwrightJunit, vitestJunit, nodeTestJunit, jestJunit, pytestJunit]) {
    const output = await produce();
    outputs[output.runner] = output;
  }
}, 300_000);
afterAll(async () => {
  await server?.close();
  for (const output of Object.values(outputs)) fs.rmSync(path.dirname(output.file), { recursive: true, force: true });
});

async function upload(file: string, environment: string): Promise<{ exitCode: number; runId: number }> {
  const args = [path.join(ROOT, 'reporter/dist/cli/main.js'), 'upload', 'junit', file, '--environment', environment, '--json'];
  const env = { PATH: process.env.PATH, PROCTOR_URL: server.url, PROCTOR_API_KEY: key };
  const done = await exec(process.execPath, args, { env }).catch((error: { code: number; stdout: string }) => error);
  const answer = JSON.parse(done.stdout);
  return { exitCode: answer.exit_code, runId: answer.test_run.id };
}

interface Expected {
  status: 'passed' | 'failed' | 'skipped' | 'flaky';
  retries?: number;
  error?: string;
  skipReason?: string | null;
}

/** What each runner reported of its suite: the titles as it writes them. */
const REPORTED: Record<string, Record<string, Expected>> = {
  playwright: {
    'adds an item': { status: 'passed' },
    'totals the cart': { status: 'failed', retries: 1, error: 'Expected: "checkout total"' },
    'pays by card': { status: 'skipped', skipReason: 'payments are off' },
    'applies a coupon': { status: 'flaky', retries: 1 },
  },
  vitest: {
    'adds an item': { status: 'passed' },
    'totals the cart': { status: 'failed', error: "expected 'cart total' to be 'checkout total'" },
    'pays by card': { status: 'skipped' },
    // Vitest's JUnit records a retried test's last run alone.
    'applies a coupon': { status: 'passed' },
  },
  'node-test': {
    'adds an item': { status: 'passed' },
    'totals the cart': { status: 'failed', error: 'Expected values to be strictly equal' },
    'pays by card': { status: 'skipped', skipReason: 'payments are off' },
  },
  jest: {
    'adds an item': { status: 'passed' },
    'totals the cart': { status: 'failed', error: 'Expected: "checkout total"' },
    'pays by card': { status: 'skipped' },
    'applies a coupon': { status: 'passed' },
  },
  pytest: {
    test_adds_an_item: { status: 'passed' },
    test_totals_the_cart: { status: 'failed', error: "AssertionError: assert 'cart total' == 'checkout total'" },
    test_pays_by_card: { status: 'skipped', skipReason: 'payments are off' },
  },
};

/** Each testcase's time in the file, in milliseconds, by name: what the runner measured. */
function durationsIn(file: string): Map<string, number> {
  const xml = fs.readFileSync(file, 'utf8');
  const durations = new Map<string, number>();
  for (const match of xml.matchAll(/<testcase\b[^>]*>/g)) {
    const name = /\bname="([^"]*)"/.exec(match[0])?.[1]?.trim();
    const time = /\btime="([^"]*)"/.exec(match[0])?.[1];
    if (name && time) durations.set(name, Math.round(Number(time) * 1000));
  }
  return durations;
}

describe('JUnit XML from real runners', () => {
  it.each(Object.keys(REPORTED))('when %s writes its JUnit XML and it is uploaded, then Proctor shows each test as the runner reported it', async (runner) => {
    const output = outputs[runner] as RunnerOutput;
    const { exitCode, runId } = await upload(output.file, 'unit');
    expect(exitCode).toBe(1);
    const run = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run;
    const expected = REPORTED[runner] as Record<string, Expected>;
    const shown = Object.fromEntries(run.flattenedSummaryDetails.map((d: { title: string }) => [d.title, d]));
    expect(Object.keys(shown).sort()).toEqual(Object.keys(expected).sort());
    const durations = durationsIn(output.file);
    for (const [title, want] of Object.entries(expected)) {
      const test = shown[title];
      expect(test.status, `${runner}: ${title}`).toBe(want.status);
      expect(test.retries, `${runner}: ${title}`).toBe(want.retries ?? 0);
      if (want.error) expect(test.error_message, `${runner}: ${title}`).toContain(want.error);
      if (want.status === 'failed') expect(test.failure_group_id).toMatch(/^fg_/);
      if (want.skipReason !== undefined) expect(test.skip_reason, `${runner}: ${title}`).toBe(want.skipReason);
      // A retried test's time is its runs' together; Playwright writes the first run's alone.
      if (!want.retries) expect(test.duration, `${runner}: ${title}`).toBe(durations.get(title) ?? 0);
    }
    const counts = run.testRun;
    const statuses = Object.values(expected).map((want) => want.status);
    expect(counts).toMatchObject({
      state: 'failed',
      total_count: statuses.length,
      failed_count: statuses.filter((s) => s === 'failed').length,
      flaky_count: statuses.filter((s) => s === 'flaky').length,
    });
  });

  it("when Playwright's junit reporter names a failure's files, then they are uploaded as that attempt's attachments, byte for byte", async () => {
    const output = outputs.playwright as RunnerOutput;
    const { runId } = await upload(output.file, 'unit');
    const run = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run;
    const failing = run.flattenedSummaryDetails.find((d: { title: string }) => d.title === 'totals the cart');
    const context = failing.attachments.find((a: { name: string; retry: number }) => a.name === 'error-context' && a.retry === 0);
    expect(context).toMatchObject({ content_type: 'text/markdown' });
    const named = /\[\[ATTACHMENT\|([^\]]*cart-totals-the-cart\/error-context\.md)\]\]/.exec(fs.readFileSync(output.file, 'utf8'))?.[1] as string;
    const local = fs.readFileSync(path.resolve(path.dirname(output.file), named), 'utf8');
    const downloaded = await fetch(new URL(context.url, server.url));
    expect(await downloaded.text()).toBe(local);
  });

  it('when a runner is run again, then its tests keep their ids: one history across uploads', async () => {
    const first = await upload((outputs.pytest as RunnerOutput).file, 'unit');
    const again = await upload((await pytestJunit()).file, 'unit');
    const ids = async (runId: number) =>
      ((await api.get(`/api/test-runs/${runId}`)).body.data.test_run.flattenedSummaryDetails as { test_case_id: string }[]).map((d) => d.test_case_id).sort();
    expect(await ids(again.runId)).toEqual(await ids(first.runId));
  });

  it('when a test is flaky across uploads, then it is scored and quarantined as a Playwright test would be', async () => {
    await api.put('/api/quarantine-policy', { mode: 'auto', threshold: 0.2, cap_percent: 50, expiry_days: 7, release_after_clean_runs: 3 });
    const file = (outputs.playwright as RunnerOutput).file;
    let last = 0;
    // A test is classed from its tenth counted run on, whatever wrote its results.
    for (let round = 0; round < 10; round++) {
      last = (await upload(file, 'nightly')).runId;
      // Scores and the policy follow each run's end, as for a reporter's runs.
      await waitForRollups(server.sql);
    }
    const nightly = environmentIds.nightly as number;
    const flaky = (await api.get(`/api/flaky-tests?environment_id=${nightly}&class=flaky`)).body.data.tests;
    expect(flaky).toEqual([expect.objectContaining({ title: 'applies a coupon', score: 1, quarantined: true })]);
    const snoozes = (await api.get(`/api/snoozes?environment_id=${nightly}`)).body.data.snoozes;
    expect(snoozes).toEqual([expect.objectContaining({ source: 'auto', test_ids: [flaky[0].test_case_id], created_from_test_run_id: expect.any(Number) })]);
    expect(snoozes[0].created_from_test_run_id).toBeLessThanOrEqual(last);
  });
});
