import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium, type Page } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from '../helpers/axe.ts';
import { client } from '../helpers/http.ts';
import { CHROMIUM_LAUNCH_OPTIONS, reporterEnv, ROOT, runSampleSuite } from '../helpers/playwright.ts';
import { runIdLinkedIn, waitForRollups } from '../helpers/runs.ts';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';
import { memberPages } from '../helpers/pages.ts';

// A repository of its own (git init) whose CODEOWNERS (GitHub's place for it) gives every test to
// @acme/qa and the admin folder to @acme/admin, and one test that names its owner in an annotation:
// real Playwright with the reporter lists each test's owners, and every list answers them.
const CODEOWNERS = `# Owners of the end-to-end tests
*                @acme/qa
/tests/admin/    @acme/admin
`;
const CART = `
import { test, expect } from '@playwright/test';
test('adds to the cart', async () => { expect(1).toBe(1); });
test('pays by card', { annotation: { type: 'owner', description: '@alice' } }, async () => { expect(2, 'the payment fails').toBe(3); });
`;
const ADMIN = `
import { test, expect } from '@playwright/test';
test('lists users', async () => { expect('none', 'the admin list fails').toBe('some'); });
`;

let server: TestServer;
let api: ReturnType<typeof client>;
let projectId: number;
let key: string;
let suiteDir: string;
let runId: number;

beforeAll(async () => {
  server = await startTestServer({ clock: new TestClock('live') });
  const project = await seedProject(server.sql);
  projectId = project.projectId;
  key = project.key;
  api = client(server.url, project.key);
  await seedEnvironment(server.sql, projectId, 'local');
  fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
  suiteDir = fs.mkdtempSync(path.join(ROOT, '.tmp', 'owners-'));
  expect(spawnSync('git', ['init', '-q'], { cwd: suiteDir }).status).toBe(0);
  fs.mkdirSync(path.join(suiteDir, '.github'));
  fs.mkdirSync(path.join(suiteDir, 'tests', 'admin'), { recursive: true });
  fs.writeFileSync(path.join(suiteDir, '.github', 'CODEOWNERS'), CODEOWNERS);
  fs.writeFileSync(path.join(suiteDir, 'playwright.config.ts'), "export default { testDir: 'tests', retries: 0 };\n");
  fs.writeFileSync(path.join(suiteDir, 'tests', 'cart.spec.ts'), CART);
  fs.writeFileSync(path.join(suiteDir, 'tests', 'admin', 'users.spec.ts'), ADMIN);
});
afterAll(async () => {
  await server?.close();
  if (suiteDir) fs.rmSync(suiteDir, { recursive: true, force: true });
});

const EXPECTED = { 'adds to the cart': ['@acme/qa'], 'pays by card': ['@alice', '@acme/qa'], 'lists users': ['@acme/admin'] };

describe('owners from CODEOWNERS and annotations', () => {
  it('when a suite runs with the reporter in a repository with CODEOWNERS, then each test case has its owners, annotations first', async () => {
    const run = await runSampleSuite({ env: reporterEnv(server.url, key, 'local'), cwd: suiteDir });
    expect(run.exitCode, run.output).toBe(1);
    runId = runIdLinkedIn(run.output, /\[proctor\] \d+\/\d+ results delivered to /);
    const listed = (await api.get(`/api/test-cases/v2?project_id=${projectId}`)).body.data.test_cases as { name: string; owners: string[] }[];
    expect(Object.fromEntries(listed.map((test) => [test.name, test.owners]))).toEqual(EXPECTED);
  });

  it('when the test cases are listed by owner, then only that owner’s tests come', async () => {
    const names = async (owner: string) =>
      ((await api.get(`/api/test-cases/v2?project_id=${projectId}&owner=${encodeURIComponent(owner)}`)).body.data.test_cases as { name: string }[])
        .map((test) => test.name)
        .sort();
    expect(await names('@acme/qa')).toEqual(['adds to the cart', 'pays by card']);
    expect(await names('@acme/admin')).toEqual(['lists users']);
    expect(await names('@alice')).toEqual(['pays by card']);
    expect(await names('@nobody')).toEqual([]);
  });

  it("when the run is read, then each failure carries its test's owners", async () => {
    const details = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.flattenedSummaryDetails as {
      title: string;
      status: string;
      owners: string[];
    }[];
    expect(Object.fromEntries(details.map((detail) => [detail.title, detail.owners]))).toEqual(EXPECTED);
    expect(
      details
        .filter((detail) => detail.status === 'failed')
        .map((detail) => detail.title)
        .sort(),
    ).toEqual(['lists users', 'pays by card']);
  });

  it('when flaky tests are listed by owner, then only that owner’s tests come, with their owners', async () => {
    await waitForRollups(server.sql);
    const tests = async (owner: string) =>
      ((await api.get(`/api/flaky-tests?owner=${encodeURIComponent(owner)}`)).body.data.tests as { title: string; owners: string[] }[]).map((test) => [
        test.title,
        test.owners,
      ]);
    expect(await tests('@acme/admin')).toEqual([['lists users', ['@acme/admin']]]);
    expect((await tests('@acme/qa')).map(([title]) => title).sort()).toEqual(['adds to the cart', 'pays by card']);
  });

  it('when an assistant asks MCP for one owner’s failures, tests and flaky tests, then each answer holds theirs alone, with owners', async () => {
    const mcp = new Client({ name: 'proctor-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const call = async (name: string, args: Record<string, unknown>): Promise<any> => {
        const result = (await mcp.callTool({ name, arguments: args })) as { isError?: boolean; content: { text: string }[] };
        expect(result.isError, result.content[0]?.text).toBeFalsy();
        return JSON.parse(result.content[0]?.text ?? '');
      };
      const run = await call('get_run', { run_id: runId, owner: '@alice' });
      expect(run.failures.map((f: { title: string; owners: string[] }) => [f.title, f.owners])).toEqual([['pays by card', ['@alice', '@acme/qa']]]);
      expect(run.failures_total).toBe(1);
      const found = await call('search_tests', { query: '', owner: '@acme/admin' });
      expect(found.tests.map((t: { title: string; owners: string[] }) => [t.title, t.owners])).toEqual([['lists users', ['@acme/admin']]]);
      const flaky = await call('list_flaky_tests', { owner: '@acme/admin' });
      expect(flaky.tests.map((t: { title: string; owners: string[] }) => [t.title, t.owners])).toEqual([['lists users', ['@acme/admin']]]);
      const test = await call('get_test', { test_case_id: found.tests[0].id });
      expect(test.test.owners).toEqual(['@acme/admin']);
    } finally {
      await mcp.close();
    }
  });

  it("when a member opens the tests page and the run page by owner, then each shows that owner's tests or failures alone, every owner a link to its filter", async () => {
    const page = await memberPages(server, projectId);
    const tests = await page(`/tests?days=30&owner=${encodeURIComponent('@acme/admin')}`);
    expect(tests).toContain('lists users');
    expect(tests).not.toContain('adds to the cart');
    expect(tests).not.toContain('pays by card');
    expect(tests).toContain(`<a class="owner" href="/projects/${projectId}/tests?owner=%40acme%2Fadmin">@acme/admin</a>`);
    const all = await page('/tests?days=30');
    expect(all).toContain(`<a class="owner" href="/projects/${projectId}/tests?owner=%40alice">@alice</a>`);

    const run = await page(`/runs/${runId}?owner=${encodeURIComponent('@alice')}`);
    expect(run).toContain('<strong aria-current="page">@alice (1)</strong>');
    expect(run).toContain(`<a href="/projects/${projectId}/runs/${runId}?owner=%40acme%2Fadmin">@acme/admin (1)</a>`);
    // Its failures table holds @alice's failure alone (the run's other parts still name the rest).
    expect(run).toContain('<td class="test"><strong>pays by card</strong>');
    expect(run).not.toContain('<td class="test"><strong>lists users</strong>');
    expect(await page(`/runs/${runId}`)).toContain('<td class="test"><strong>lists users</strong>');
  });

  it("when a member filters the flaky tests, the tests and the failure groups by owner in Chromium, then each list keeps that owner's alone, by its form and by an owner's link, and axe finds no serious violation", async () => {
    const { userId } = await seedUser(server.sql, [projectId], { role: 'member' });
    const browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
    try {
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${server.url}/sign-in/link?token=${await createLoginLink(server.sql, userId, server.clock.now)}`);
      /** The titles a list's rows link to (its rows carry the test's or the group's id). */
      const listed = async (p: Page, rows: string) => (await p.locator(`${rows} td:first-child > a, ${rows} td:first-child strong`).allTextContents()).sort();

      // The flaky tests: the two failing tests are listed (early, before their class is known) until an owner is asked for.
      await page.goto(`${server.url}/projects/${projectId}/flaky-tests`);
      expect(await listed(page, 'tr[data-test]')).toEqual(['lists users', 'pays by card']);
      await page.getByRole('search', { name: 'Find flaky tests' }).getByLabel('Owner').fill('@acme/admin');
      await page.getByRole('button', { name: 'Find' }).click();
      await page.waitForURL(/owner=%40acme%2Fadmin/);
      expect(await listed(page, 'tr[data-test]')).toEqual(['lists users']);
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByRole('search', { name: 'Find flaky tests' }).getByLabel('Owner').fill('@nobody');
      await page.getByRole('button', { name: 'Find' }).click();
      await page.waitForURL(/owner=%40nobody/);
      expect(await page.locator('tr[data-test]').count()).toBe(0);
      await expect.poll(() => page.locator('p.empty').textContent()).toContain('No test owned by @nobody');
      // An owner's link under a test's title: the list of that owner's.
      await page.goto(`${server.url}/projects/${projectId}/flaky-tests`);
      await page.locator('tr[data-test]', { hasText: 'pays by card' }).getByRole('link', { name: '@alice' }).click();
      await page.waitForURL(/flaky-tests\?owner=%40alice$/);
      expect(await listed(page, 'tr[data-test]')).toEqual(['pays by card']);

      // The tests and the failure groups, by an owner's link.
      await page.goto(`${server.url}/projects/${projectId}/tests?days=30`);
      await page.locator('tr[data-test]', { hasText: 'lists users' }).getByRole('link', { name: '@acme/admin' }).click();
      await page.waitForURL(/tests\?owner=%40acme%2Fadmin$/);
      expect(await page.locator('tr[data-test]').allTextContents()).toEqual([expect.stringContaining('lists users')]);
      expect(await seriousViolations(page)).toEqual([]);
      await page.goto(`${server.url}/projects/${projectId}/failure-groups`);
      expect(await page.locator('tr[data-group]').count()).toBe(2);
      await page.locator('tr[data-group]', { hasText: '@alice' }).getByRole('link', { name: '@alice' }).click();
      await page.waitForURL(/failure-groups\?owner=%40alice$/);
      expect(await page.locator('tr[data-group]').allTextContents()).toEqual([expect.stringContaining('the payment fails')]);
      expect(await seriousViolations(page)).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it('when a test loses its CODEOWNERS line, then the next run leaves it without owners', async () => {
    fs.writeFileSync(path.join(suiteDir, '.github', 'CODEOWNERS'), '/tests/admin/ @acme/admin\n');
    const run = await runSampleSuite({ env: reporterEnv(server.url, key, 'local'), cwd: suiteDir });
    expect(run.exitCode, run.output).toBe(1);
    const listed = (await api.get(`/api/test-cases/v2?project_id=${projectId}`)).body.data.test_cases as { name: string; owners: string[] }[];
    expect(Object.fromEntries(listed.map((test) => [test.name, test.owners]))).toEqual({
      'adds to the cart': [],
      'pays by card': ['@alice'],
      'lists users': ['@acme/admin'],
    });
  });
});
