import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { CHROMIUM_LAUNCH_OPTIONS, reporterEnv, ROOT, runSampleSuite, type SuiteRun } from '../helpers/playwright.ts';
import { freePort } from '../helpers/process.ts';
import { seedEnvironment, seedProject, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

// A suite with one test that always fails and one that passes, run with real Playwright and the
// reporter: Playwright's exit code is what the user's CI sees.
const SUITE = `
import { test, expect } from '@playwright/test';
test('always fails', async () => { expect(1, 'it never works').toBe(2); });
test('passes', async () => { expect(1).toBe(1); });
`;

const SAID_ABOUT_SNOOZES = /\[proctor\] \d+ failed test\(s\) (forgiven|snoozed)/;

let server: TestServer;
let api: ReturnType<typeof client>;
let key: string;
let environmentId: number;
let suiteDir: string;

beforeAll(async () => {
  server = await startTestServer({ clock: new TestClock('live') });
  const project = await seedProject(server.sql);
  key = project.key;
  environmentId = await seedEnvironment(server.sql, project.projectId, 'local');
  api = client(server.url, key);
  fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
  suiteDir = fs.mkdtempSync(path.join(ROOT, '.tmp', 'forgiveness-'));
  fs.writeFileSync(
    path.join(suiteDir, 'playwright.config.ts'),
    `export default { testDir: '.', retries: 0, use: { launchOptions: ${JSON.stringify(CHROMIUM_LAUNCH_OPTIONS)} } };\n`,
  );
  fs.writeFileSync(path.join(suiteDir, 'forgiveness.spec.ts'), SUITE);
});

afterAll(async () => {
  await server?.close();
  if (suiteDir) fs.rmSync(suiteDir, { recursive: true, force: true });
});

const run = (env: Record<string, string> = {}): Promise<SuiteRun> => runSampleSuite({ cwd: suiteDir, env: { ...reporterEnv(server.url, key), ...env } });
const failingId = (suite: SuiteRun) => suite.recorded.find((a) => a.title === 'always fails')?.id as string;

describe('a failed test snoozed in Proctor, in the user CI', () => {
  let snoozeId: number;
  let failing: string;

  it('when it is not snoozed, then Playwright exits 1 and nothing is said about snoozes', async () => {
    const suite = await run();
    expect(suite.exitCode, suite.output).toBe(1);
    expect(suite.output).not.toMatch(SAID_ABOUT_SNOOZES);
    failing = failingId(suite);
    expect(failing).toMatch(/^[0-9a-f]{20}-[0-9a-f]{20}$/);
  });

  it('when every failed test is snoozed, then Playwright exits 0, the forgiven failure is named with its date, and its result is still recorded', async () => {
    const until = new Date(Date.now() + 7 * 24 * 60 * 60 * 1000).toISOString();
    const created = await api.post('/api/snoozes', { test_ids: [failing], snooze_until: until, scoped_to_environment_id: environmentId, description: 'known' });
    snoozeId = created.body.data.snooze.id;
    const suite = await run();
    expect(suite.exitCode, suite.output).toBe(0);
    expect(suite.output).toContain(
      `[proctor] 1 failed test(s) forgiven, all snoozed in Proctor: forgiveness.spec.ts › always fails (until ${until.slice(0, 10)})`,
    );
    const [latest] = (await api.get('/api/test-runs?environment=local')).body.data.test_runs;
    const details = (await api.get(`/api/test-runs/${latest.id}`)).body.data.test_run;
    const failed = details.flattenedSummaryDetails.find((d: { title: string }) => d.title === 'always fails');
    expect(failed).toMatchObject({ status: 'failed', snoozed: true });
  });

  it('when forgiving is turned off, then the snoozed failure fails the build', async () => {
    const suite = await run({ PROCTOR_FORGIVE_SNOOZED: 'false' });
    expect(suite.exitCode, suite.output).toBe(1);
    expect(suite.output).not.toMatch(SAID_ABOUT_SNOOZES);
  });

  it('when the server cannot be reached at start, then nothing is forgiven and Playwright exits 1', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const suite = await run({ PROCTOR_URL: closed, PROCTOR_UPLOAD_MAX_ATTEMPTS: '1' });
    expect(suite.exitCode, suite.output).toBe(1);
    // The reporter gave the server up: its last line says so, and nothing was forgiven.
    expect(suite.output.trim().split('\n').pop()).toMatch(/^\[proctor\] 0\/\d+ results delivered; gave up: the server could not be reached \(ECONNREFUSED/);
  });

  it('when the snooze is removed, then Playwright exits 1 again', async () => {
    expect((await api.delete(`/api/snoozes/${snoozeId}`)).status).toBe(200);
    const suite = await run();
    expect(suite.exitCode, suite.output).toBe(1);
    expect(suite.output).not.toMatch(SAID_ABOUT_SNOOZES);
  });
});
