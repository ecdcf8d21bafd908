import fs from 'node:fs';
import path from 'node:path';
import { chromium } from '@playwright/test';
import { expect } from 'vitest';
import { client } from './http.ts';
import { CHROMIUM_LAUNCH_OPTIONS, REPORTER, reporterEnv, ROOT, videoEnv } from './playwright.ts';
import { runReportedSuite } from './reports.ts';
import { waitForRun } from './runs.ts';

// A suite of its own, inside the repository so that it resolves @playwright/test: a test that fails
// with a screenshot, a video and a trace, a flaky one, a passing one, one that attaches an HTML page,
// one that attaches bytes another test attaches too, and one whose attachment is over the limit.
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
  use: {
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    video: 'retain-on-failure',
    launchOptions: ${JSON.stringify(CHROMIUM_LAUNCH_OPTIONS)},
  },
});
`;

interface JsonAttachment {
  name: string;
  contentType: string;
  path?: string;
  body?: string;
}
export interface JsonSuite {
  specs?: { title: string; tests: { status: string; results: { retry: number; attachments: JsonAttachment[] }[] }[] }[];
  suites?: JsonSuite[];
}

export interface ListedAttachment {
  retry: number;
  name: string;
  content_type: string;
  size_bytes: number;
  url: string;
}
export type Details = { title: string; status: string; attachments: ListedAttachment[] }[];

export interface SuiteOutcome {
  dir: string;
  output: string;
  exitCode: number | null;
  report: JsonSuite;
  runId: number;
  details: Details;
}

function specsOf(suite: JsonSuite): NonNullable<JsonSuite['specs']> {
  return [...(suite.specs ?? []), ...(suite.suites ?? []).flatMap(specsOf)];
}

/** Writes the suite into a folder of its own under ROOT/.tmp (removed by the caller). */
export function writeArtifactsSuite(): string {
  fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, '.tmp', 'artifacts-suite-'));
  fs.writeFileSync(path.join(dir, 'playwright.config.ts'), CONFIG);
  fs.writeFileSync(path.join(dir, 'artifacts.spec.ts'), SUITE);
  return dir;
}

/** Runs the suite with real Playwright and Chromium, a JSON report and the reporter, into environment `local`. */
export async function runArtifactsSuite(serverUrl: string, key: string): Promise<SuiteOutcome> {
  const dir = writeArtifactsSuite();
  const {
    exitCode,
    output,
    report: written,
  } = await runReportedSuite({
    cli: path.join(ROOT, 'node_modules/@playwright/test/cli.js'),
    cwd: dir,
    reporter: REPORTER,
    reportFile: path.join(dir, 'report.json'),
    args: [`--output=${path.join(dir, 'results')}`],
    env: { ...process.env, ...reporterEnv(serverUrl, key), ...videoEnv(), PROCTOR_ARTIFACT_LIMIT_MB: '1' },
  });
  // The same report, read here for its attachments.
  const report = written as JsonSuite;
  const api = client(serverUrl, key);
  const [listed] = (await api.get('/api/test-runs?environment=local')).body.data.test_runs;
  const details = (await waitForRun(api, listed.id)).flattenedSummaryDetails as Details;
  return { dir, output, exitCode, report, runId: listed.id, details };
}

export function detailOf(details: Details, title: string): Details[number] {
  return details.find((d) => d.title === title) as Details[number];
}

export async function download(url: string): Promise<{ status: number; headers: Headers; bytes: Buffer; url: string }> {
  const response = await fetch(url);
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()), url: response.url };
}

/**
 * Every attachment of every failed or flaky attempt in Playwright's JSON report is listed with its
 * retry, name, type and size, and downloads equal to the file Playwright wrote or to its body.
 * Returns how many were compared.
 */
export async function expectAttachmentsAsReported(outcome: SuiteOutcome): Promise<number> {
  let compared = 0;
  for (const spec of specsOf(outcome.report)) {
    const test = spec.tests[0];
    if (!test || (test.status !== 'unexpected' && test.status !== 'flaky')) continue;
    if (spec.title === 'attaches too much') continue;
    const listed = detailOf(outcome.details, spec.title).attachments;
    const expected = test.results.flatMap((result) => result.attachments.map((a) => ({ retry: result.retry, ...a })));
    expect(listed.map((a) => [a.retry, a.name, a.content_type]).sort(), spec.title).toEqual(expected.map((a) => [a.retry, a.name, a.contentType]).sort());
    for (const attachment of expected) {
      const bytes = attachment.path ? fs.readFileSync(attachment.path) : Buffer.from(attachment.body as string, 'base64');
      const match = listed.find((a) => a.retry === attachment.retry && a.name === attachment.name && a.size_bytes === bytes.length);
      expect(match, `${spec.title}: ${attachment.name}`).toBeDefined();
      const downloaded = await download((match as ListedAttachment).url);
      expect(downloaded.status).toBe(200);
      expect(downloaded.bytes.equals(bytes), `${spec.title}: ${attachment.name}`).toBe(true);
      compared++;
    }
  }
  const failing = detailOf(outcome.details, 'fails with a screenshot and a trace').attachments.map((a) => a.name);
  expect(failing).toEqual(expect.arrayContaining(['screenshot', 'trace', 'video']));
  expect(detailOf(outcome.details, 'is flaky').attachments.some((a) => a.retry === 0 && a.name === 'screenshot')).toBe(true);
  return compared;
}

/**
 * Opens the run page in Chromium: the failure's screenshot shows and its video loads, and "Open
 * trace" opens the trace viewer on its actions. Returns every URL requested outside `origins`.
 */
export async function openFailureInBrowser(summaryUrl: string, origins: string[]): Promise<string[]> {
  const browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
  try {
    const context = await browser.newContext();
    const outside: string[] = [];
    context.on('request', (request) => {
      const url = request.url();
      if (!origins.some((origin) => url.startsWith(origin)) && !url.startsWith('blob:') && !url.startsWith('data:')) outside.push(url);
    });
    const page = await context.newPage();
    expect((await page.goto(summaryUrl))?.status()).toBe(200);
    const row = page.locator('tr', { hasText: 'fails with a screenshot and a trace' });
    const screenshot = row.locator('img').first();
    await screenshot.scrollIntoViewIfNeeded();
    await expect.poll(() => screenshot.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    // HAVE_METADATA or more: the browser fetched the video and read its webm header.
    const video = row.locator('video').first();
    await expect.poll(() => video.evaluate((v: HTMLVideoElement) => v.readyState >= 1 && v.duration > 0)).toBe(true);
    // The viewer opens in a tab of its own; the run page stays where it was.
    const runPageUrl = page.url();
    const [viewer] = await Promise.all([context.waitForEvent('page'), row.getByRole('link', { name: 'Open trace' }).first().click()]);
    await viewer.waitForURL(/\/trace-viewer\/index\.html\?trace=/);
    expect(page.url()).toBe(runPageUrl);
    await expect.poll(() => viewer.getByText('toHaveText').count(), { timeout: 30_000 }).toBeGreaterThan(0);
    expect(await viewer.getByText(/Click/).count()).toBeGreaterThan(0);
    return outside;
  } finally {
    await browser.close();
  }
}
