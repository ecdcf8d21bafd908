import { spawn } from 'node:child_process';
import { chromium } from '@playwright/test';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './helpers/http.ts';
import { CHROMIUM_LAUNCH_OPTIONS, REPORTER, reporterEnv, ROOT } from './helpers/playwright.ts';
import { trigger, waitForRun } from './helpers/runs.ts';
import { createKey } from '../server/src/auth/store.ts';
import { createProject } from '../server/src/projects/store.ts';
import { seedEnvironment, seedProject, startTestServer, TestClock, type TestServer } from './helpers/server.ts';

// A suite of its own, inside the repository so that it resolves @playwright/test: a test that fails
// with a screenshot and a trace, a flaky one, a passing one, one that attaches an HTML page, one that
// attaches bytes another test attaches too, and one whose attachment is over the reporter's limit.
const SUITE = `
import { test, expect } from '@playwright/test';

const page = (text) => \`<main><h1 id="title">\${text}</h1><button>Go</button></main>\`;
const SHARED = Buffer.from('the same bytes, attached by two tests');

test('fails with a screenshot and a trace', async ({ page: p }) => {
  await p.setContent(page('Hello'));
  await p.getByRole('button', { name: 'Go' }).click();
  await expect(p.locator('#title')).toHaveText('Goodbye', { timeout: 500 });
});

test('is flaky', async ({ page: p }, testInfo) => {
  await p.setContent(page('Flaky'));
  expect(testInfo.retry, 'fails on its first try').toBe(1);
});

test('passes', async ({ page: p }) => {
  await p.setContent(page('Fine'));
  await expect(p.locator('#title')).toHaveText('Fine');
});

test('attaches an HTML page', async ({}, testInfo) => {
  await testInfo.attach('report.html', { body: '<script>document.title = "pwned"</script>', contentType: 'text/html' });
  await testInfo.attach('shared.txt', { body: SHARED, contentType: 'text/plain' });
  expect(1).toBe(2);
});

test('attaches shared bytes', async ({}, testInfo) => {
  await testInfo.attach('shared.txt', { body: SHARED, contentType: 'text/plain' });
  expect(1).toBe(2);
});

test('attaches too much', async ({}, testInfo) => {
  await testInfo.attach('big.bin', { body: Buffer.alloc(1536 * 1024, 7), contentType: 'application/octet-stream' });
  expect(1).toBe(2);
});
`;

const CONFIG = `
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: '.',
  retries: 1,
  workers: 2,
  use: { screenshot: 'only-on-failure', trace: 'retain-on-failure', launchOptions: ${JSON.stringify(CHROMIUM_LAUNCH_OPTIONS)} },
});
`;

interface JsonAttachment {
  name: string;
  contentType: string;
  path?: string;
  body?: string;
}
interface JsonSuite {
  specs?: { title: string; tests: { status: string; results: { retry: number; attachments: JsonAttachment[] }[] }[] }[];
  suites?: JsonSuite[];
}

function specsOf(suite: JsonSuite): NonNullable<JsonSuite['specs']> {
  return [...(suite.specs ?? []), ...(suite.suites ?? []).flatMap(specsOf)];
}

let server: TestServer;
let api: ReturnType<typeof client>;
let suiteDir: string;
let output = '';
let exitCode: number | null;
let report: JsonSuite;
let runId: number;
let details: { title: string; status: string; attachments: { retry: number; name: string; content_type: string; size_bytes: number; url: string }[] }[];

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProject(server.sql);
  await seedEnvironment(server.sql, project.projectId, 'local');
  api = client(server.url, project.key);
  fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
  suiteDir = fs.mkdtempSync(path.join(ROOT, '.tmp', 'artifacts-suite-'));
  fs.writeFileSync(path.join(suiteDir, 'playwright.config.ts'), CONFIG);
  fs.writeFileSync(path.join(suiteDir, 'artifacts.spec.ts'), SUITE);
  const reportFile = path.join(suiteDir, 'report.json');
  const child = spawn(process.execPath, [path.join(ROOT, 'node_modules/@playwright/test/cli.js'), 'test', `--reporter=json,${REPORTER}`, `--output=${path.join(suiteDir, 'results')}`], {
    cwd: suiteDir,
    env: {
      ...process.env,
      ...reporterEnv(server.url, project.key),
      PROCTOR_ARTIFACT_LIMIT_MB: '1',
      PLAYWRIGHT_JSON_OUTPUT_FILE: reportFile,
      CI: '',
      GITHUB_RUN_ID: '',
      FORCE_COLOR: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  exitCode = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  report = JSON.parse(fs.readFileSync(reportFile, 'utf8')) as JsonSuite;
  const [listed] = (await api.get('/api/test-runs?environment=local')).body.data.test_runs;
  runId = listed.id;
  details = (await waitForRun(api, runId)).flattenedSummaryDetails;
}, 170_000);

afterAll(async () => {
  await server?.close();
  if (suiteDir) fs.rmSync(suiteDir, { recursive: true, force: true });
});

const detail = (title: string) => details.find((d) => d.title === title) as (typeof details)[number];

async function download(url: string): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const response = await fetch(url);
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

describe('attachments of real Playwright attempts', () => {
  it('when tests fail, then every attachment of their attempts is listed with its size and downloads equal to what Playwright wrote', async () => {
    expect(exitCode, output).toBe(1);
    let compared = 0;
    for (const spec of specsOf(report)) {
      const test = spec.tests[0];
      if (!test || (test.status !== 'unexpected' && test.status !== 'flaky')) continue;
      if (spec.title === 'attaches too much') continue;
      const listed = detail(spec.title).attachments;
      const expected = test.results.flatMap((result) => result.attachments.map((a) => ({ retry: result.retry, ...a })));
      expect(listed.map((a) => [a.retry, a.name, a.content_type]).sort(), spec.title).toEqual(expected.map((a) => [a.retry, a.name, a.contentType]).sort());
      for (const attachment of expected) {
        const bytes = attachment.path ? fs.readFileSync(attachment.path) : Buffer.from(attachment.body as string, 'base64');
        const match = listed.find((a) => a.retry === attachment.retry && a.name === attachment.name && a.size_bytes === bytes.length);
        expect(match, `${spec.title}: ${attachment.name}`).toBeDefined();
        const downloaded = await download((match as { url: string }).url);
        expect(downloaded.status).toBe(200);
        expect(downloaded.bytes.equals(bytes), `${spec.title}: ${attachment.name}`).toBe(true);
        compared++;
      }
    }
    const failing = detail('fails with a screenshot and a trace').attachments.map((a) => a.name);
    expect(failing).toEqual(expect.arrayContaining(['screenshot', 'trace']));
    expect(detail('is flaky').attachments.some((a) => a.retry === 0 && a.name === 'screenshot')).toBe(true);
    expect(compared).toBeGreaterThanOrEqual(8);
  });

  it('when a test passes, then none of its attempts uploads anything (artifacts: failures)', () => {
    expect(detail('passes').attachments).toEqual([]);
  });

  it('when an attachment is HTML, then it downloads as an attachment with a safe type, nosniff and a sandbox policy, never as text/html', async () => {
    const html = detail('attaches an HTML page').attachments.find((a) => a.name === 'report.html');
    expect(html?.content_type).toBe('text/html');
    const { headers } = await download((html as { url: string }).url);
    expect(headers.get('content-type')).toBe('application/octet-stream');
    expect(headers.get('content-disposition')).toMatch(/^attachment;/);
    expect(headers.get('x-content-type-options')).toBe('nosniff');
    expect(headers.get('content-security-policy')).toContain('sandbox');
    const screenshot = detail('fails with a screenshot and a trace').attachments.find((a) => a.name === 'screenshot');
    const shown = await download((screenshot as { url: string }).url);
    expect(shown.headers.get('content-type')).toBe('image/png');
    expect(shown.headers.get('content-disposition')).toMatch(/^inline;/);
  });

  it('when two tests attach the same bytes, then the project stores them once', async () => {
    const sha = createHash('sha256').update('the same bytes, attached by two tests').digest('hex');
    const [row] = await server.sql<{ n: number }[]>`select count(*)::int as n from artifact_blobs where sha256 = ${sha}`;
    expect(row?.n).toBe(1);
    const [uses] = await server.sql<{ n: number }[]>`
      select count(*)::int as n from test_attachments a join artifact_blobs b on b.id = a.blob_id where b.sha256 = ${sha}`;
    expect(uses?.n).toBe(4);
    expect(detail('attaches shared bytes').attachments.filter((a) => a.name === 'shared.txt').map((a) => a.retry)).toEqual([0, 1]);
  });

  it('when an attachment is over the limit, then it is refused in the summary line and the test outcome is unchanged', () => {
    expect(output).toMatch(/\[proctor\] \d+ attachment\(s\) uploaded .*refused: big\.bin of .*over the limit of 1\.0 MB \(PROCTOR_ARTIFACT_LIMIT_MB\)/);
    const tooMuch = detail('attaches too much');
    expect(tooMuch.status).toBe('failed');
    expect(tooMuch.attachments.map((a) => a.name)).not.toContain('big.bin');
    expect(tooMuch.attachments.map((a) => a.name)).toContain('trace');
  });

  it('when a signed URL is altered, then it is refused with 403', async () => {
    const [first] = detail('fails with a screenshot and a trace').attachments;
    const tampered = (first as { url: string }).url.replace(/signature=[^&]+/, 'signature=AAAA');
    expect((await download(tampered)).status).toBe(403);
  });
});

describe('the run page and the trace viewer, in Chromium', () => {
  it('when a failure is opened, then its screenshot shows, and "Open trace" opens the trace viewer on its actions, with nothing from outside', async () => {
    const testRun = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run.testRun;
    const browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
    try {
      const context = await browser.newContext();
      const outside: string[] = [];
      context.on('request', (request) => {
        if (!request.url().startsWith(server.url) && !request.url().startsWith('blob:') && !request.url().startsWith('data:')) outside.push(request.url());
      });
      const page = await context.newPage();
      expect((await page.goto(testRun.summary_url))?.status()).toBe(200);
      const row = page.locator('tr', { hasText: 'fails with a screenshot and a trace' });
      const screenshot = row.locator('img').first();
      await screenshot.scrollIntoViewIfNeeded();
      await expect.poll(() => screenshot.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
      await row.getByRole('link', { name: 'Open trace' }).first().click();
      await page.waitForURL(/\/trace-viewer\/index\.html\?trace=/);
      await expect.poll(() => page.getByText('toHaveText').count(), { timeout: 30_000 }).toBeGreaterThan(0);
      expect(await page.getByText(/Click/).count()).toBeGreaterThan(0);
      expect(outside).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});

describe('the attachments API', () => {
  const bytes = Buffer.from('bytes of a screenshot, as far as this test knows');
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const declaration = (fields: Record<string, unknown> = {}) => ({
    test_id: 'aaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbbbbbb',
    retry: 0,
    name: 'screenshot',
    content_type: 'image/png',
    sha256,
    size_bytes: bytes.length,
    ...fields,
  });
  let runId: number;

  beforeAll(async () => {
    runId = (await api.post('/api/test-runs/report', { environment: 'local', total_shards: 1 })).body.data.test_run.id;
  });

  const put = (url: string, body: Buffer) => fetch(url, { method: 'PUT', body: new Uint8Array(body), headers: { 'content-type': 'application/octet-stream' } });

  it('when a declaration is malformed, then the answer is a 400 naming the field, and nothing is recorded', async () => {
    const before = await server.sql<{ n: number }[]>`select count(*)::int as n from test_attachments where test_run_id = ${runId}`;
    const response = await api.post(`/api/test-runs/${runId}/attachments`, { attachments: [declaration(), declaration({ sha256: 'ABC' })] });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain('body.attachments.1.sha256');
    const after = await server.sql<{ n: number }[]>`select count(*)::int as n from test_attachments where test_run_id = ${runId}`;
    expect(after[0]?.n).toBe(before[0]?.n);
    expect((await api.post('/api/test-runs/999999/attachments', { attachments: [declaration()] })).status).toBe(404);
  });

  it('when bytes do not hash to the declared sha256, then the upload is refused with 400 and a correct one is then stored', async () => {
    const declared = await api.post(`/api/test-runs/${runId}/attachments`, { attachments: [declaration()] });
    expect(declared.body.data.attachments[0]).toMatchObject({ status: 'upload', reason: null });
    const url = new URL(declared.body.data.attachments[0].upload_url as string, `${server.url}/`).toString();
    const forged = Buffer.from(bytes);
    forged[0] = forged[0]! ^ 1;
    const refused = await put(url, forged);
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.message).toContain('sha256');
    expect((await put(url, Buffer.concat([bytes, Buffer.from('x')]))).status).toBe(413);
    expect((await put(url, bytes)).status).toBe(200);
    // Idempotent: a retried upload of stored bytes is answered as stored.
    expect((await put(url, bytes)).status).toBe(200);
    const again = await api.post(`/api/test-runs/${runId}/attachments`, { attachments: [declaration({ retry: 1 })] });
    expect(again.body.data.attachments[0]).toMatchObject({ status: 'stored', upload_url: null });
    const files = fs.readdirSync(server.filesDir).filter((name) => /^[0-9a-f]{32}$/.test(name));
    const stored = files.filter((name) => fs.readFileSync(path.join(server.filesDir, name)).equals(bytes));
    expect(stored).toHaveLength(1);
  });

  it('when a declaration is over the server limit, then that one is refused and the others of its batch are not', async () => {
    const big = declaration({ sha256: 'f'.repeat(64), size_bytes: 101 * 1024 * 1024, name: 'video' });
    const answer = await api.post(`/api/test-runs/${runId}/attachments`, { attachments: [big, declaration({ retry: 2 })] });
    expect(answer.status).toBe(200);
    expect(answer.body.data.attachments[0]).toMatchObject({ status: 'refused', reason: expect.stringContaining("server's limit") });
    expect(answer.body.data.attachments[1]).toMatchObject({ status: 'stored' });
  });
});

describe('a run the executor runs', () => {
  it('when its tests fail, then their attachments are uploaded the same way', async () => {
    const executing = await startTestServer({ executor: true, clock: new TestClock('live') });
    try {
      // The suite's own folder, run in place by the runner user: readable by others, as a checkout is.
      fs.chmodSync(suiteDir, 0o755);
      const project = await createProject(executing.sql, { name: 'artifacts', repoUrl: suiteDir, repoName: 'acme/artifacts' });
      await seedEnvironment(executing.sql, project.id, 'exec');
      const executed = client(executing.url, await createKey(executing.sql, { projectId: project.id }));
      const run = await waitForRun(executed, await trigger(executed, { environment: 'exec', test_case_ids: [] }));
      expect(run.testRun, JSON.stringify(run.testRun)).toMatchObject({ state: 'failed', error_reason: null });
      const failing = run.flattenedSummaryDetails.find((d: { title: string }) => d.title === 'fails with a screenshot and a trace');
      const screenshot = failing.attachments.find((a: { name: string }) => a.name === 'screenshot');
      const downloaded = await download(screenshot.url);
      expect(downloaded.bytes.subarray(1, 4).toString()).toBe('PNG');
      expect(downloaded.bytes.length).toBe(screenshot.size_bytes);
      expect(failing.attachments.map((a: { name: string }) => a.name)).toContain('trace');
    } finally {
      await executing.close();
    }
  });
});
