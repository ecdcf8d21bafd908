import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../server/src/auth/store.ts';
import { createProject } from '../../server/src/projects/store.ts';
import { client } from '../helpers/http.ts';
import { ROOT } from '../helpers/playwright.ts';
import { trigger, waitForRollups, waitForRun } from '../helpers/runs.ts';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

// A repository (a folder the executor runs in place) with a steady test and one that fails in one
// repeat of five: the run itself passes both.
const SUITE = `
import { test, expect } from '@playwright/test';
test('steady', async () => { expect(1).toBe(1); });
test('fails once in five', async ({}, testInfo) => { expect(testInfo.repeatEachIndex, 'its fourth repeat fails').not.toBe(3); });
`;

let server: TestServer;
let api: ReturnType<typeof client>;
let suiteDir: string;
let environmentId: number;

beforeAll(async () => {
  server = await startTestServer({ executor: true, clock: new TestClock('live') });
  fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
  suiteDir = fs.mkdtempSync(path.join(ROOT, '.tmp', 'burn-in-'));
  // Run in place by the runner user: readable by others, as a checkout is.
  fs.chmodSync(suiteDir, 0o755);
  fs.writeFileSync(path.join(suiteDir, 'playwright.config.ts'), "export default { testDir: '.', retries: 0 };\n");
  fs.writeFileSync(path.join(suiteDir, 'burn-in.spec.ts'), SUITE);
  const project = await createProject(server.sql, { name: 'burn-in', repoUrl: suiteDir, repoName: 'acme/burn-in' });
  api = client(server.url, await createKey(server.sql, { projectId: project.id }));
  const created = await api.post('/api/environments', { name: 'Nightly', slug: 'nightly', burn_in_repeats: 5 });
  expect(created.body.data.environment.burn_in_repeats).toBe(5);
  environmentId = created.body.data.environment.id;
});

afterAll(async () => {
  await server?.close();
  if (suiteDir) fs.rmSync(suiteDir, { recursive: true, force: true });
});

const flakyTests = async () =>
  (await api.get(`/api/flaky-tests?environment_id=${environmentId}`)).body.data.tests as {
    title: string;
    class: string;
    score: number;
    runs_counted: number;
  }[];

describe('burn-in of new tests', () => {
  it('when a new test fails once in five repeats, then it is classified flaky after its first run, and a steady one is not', async () => {
    const runId = await trigger(api, { environment: 'nightly', test_case_ids: [] });
    const run = await waitForRun(api, runId);
    expect(run.testRun, JSON.stringify(run.testRun)).toMatchObject({ state: 'passed', error_reason: null });
    await waitForRollups(server.sql);
    const burned = await server.sql<{ repeats: number; passed: number }[]>`
      select repeats, passed from burn_in_results where test_run_id = ${runId} order by passed`;
    expect(burned).toEqual([
      { repeats: 5, passed: 4 },
      { repeats: 5, passed: 5 },
    ]);
    const tests = await flakyTests();
    expect(tests.find((t) => t.title === 'fails once in five')).toMatchObject({ class: 'flaky', score: 1, runs_counted: 1 });
    expect(tests.find((t) => t.title === 'steady')).toMatchObject({ class: 'unknown', score: 0, runs_counted: 1 });
  });

  it('when the tests are no longer new, then the next run repeats none of them', async () => {
    const runId = await trigger(api, { environment: 'nightly', test_case_ids: [] });
    expect((await waitForRun(api, runId)).testRun.state).toBe('passed');
    const [row] = await server.sql<{ n: number }[]>`select count(*)::int as n from burn_in_results where test_run_id = ${runId}`;
    expect(row?.n).toBe(0);
  });

  it('when burn_in_repeats is out of range, then the environment is refused with the field named', async () => {
    const refused = await api.patch(`/api/environments/${environmentId}`, { burn_in_repeats: 101 });
    expect(refused.status).toBe(400);
    // Environments answer the contract's flat error shape.
    expect(refused.body.error).toContain('burn_in_repeats');
  });
});
