import { chromium } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatSvg, renderCounts } from '@proctor/badge';
import { CHROMIUM_LAUNCH_OPTIONS } from '../helpers/playwright.ts';
import { countTextPixels, decodePng, hasPngSignature } from '../helpers/png.ts';
import { seedEnvironment, seedProject, startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let projectId: number;
const DAY = 86_400_000;

async function finishedRun(environmentId: number, state: string, endedAgoMs: number, counts = { success: 4, failed: 2, flaky: 1, skipped: 1 }) {
  const ended = new Date(server.clock.now.getTime() - endedAgoMs);
  await server.sql`
    insert into test_runs (project_id, environment_id, state, origin, success_count, failed_count, flaky_count, skipped_count,
                           total_count, created_at, run_started_at, run_ended_at)
    values (${projectId}, ${environmentId}, ${state}, 'api', ${counts.success}, ${counts.failed}, ${counts.flaky}, ${counts.skipped},
            ${counts.success + counts.failed + counts.flaky + counts.skipped}, ${ended}, ${ended}, ${ended})`;
}

async function environment(slug: string, name = slug): Promise<number> {
  const id = await seedEnvironment(server.sql, projectId, slug);
  await server.sql`update environments set name = ${name} where id = ${id}`;
  return id;
}

const badge = (path: string, headers: Record<string, string> = {}) => fetch(`${server.url}/badges/${projectId}/${path}`, { headers });

beforeAll(async () => {
  server = await startTestServer({ env: { PROCTOR_BADGE_STATE_TTL_MS: '0' } });
  projectId = (await seedProject(server.sql)).projectId;
  await finishedRun(await environment('passing-env', 'Production'), 'passed', 1000);
  await finishedRun(await environment('failing-env', 'Staging'), 'failed', 1000);
  await finishedRun(await environment('error-env', 'QA'), 'error', 1000);
  await finishedRun(await environment('cancelled-env', 'Preview'), 'cancelled', 1000);
  await environment('empty-env', 'Nightly');
});
afterAll(async () => server?.close());

const STATES = [
  ['passing-env', 'passing'],
  ['failing-env', 'failing'],
  ['error-env', 'error'],
  ['cancelled-env', 'cancelled'],
  ['empty-env', 'no runs'],
] as const;
const STYLES = ['flat', 'flat-square', 'plastic', 'for-the-badge', 'social'];

describe('SVG badges', () => {
  it.each(STATES)('when the latest finished run of %s is as it is, then the badge says %s', async (slug, message) => {
    const response = await badge(`${slug}.svg`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('image/svg+xml');
    const svg = await response.text();
    expect(svg).toContain(`: ${message}</title>`);
    expect(svg).toContain('role="img"');
    expect(svg).toMatch(/aria-label="[^"]+: [^"]+"/);
  });

  it('when each state is drawn in each style, then the formatted SVG matches its snapshot', async () => {
    for (const [slug] of STATES) {
      for (const style of STYLES) {
        const svg = await (await badge(`${slug}.svg?style=${style}`)).text();
        expect(formatSvg(svg)).toMatchSnapshot(`${slug} ${style}`);
      }
    }
  });

  it('when the environment name holds markup and quotes, then it is escaped everywhere', async () => {
    await environment('hostile', `<script>alert("x")</script> & 'q'`);
    const svg = await (await badge('hostile.svg')).text();
    expect(svg).not.toContain('<script');
    expect(svg).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &apos;q&apos;');
    const labelled = await (await badge('passing-env.svg?label=%22%3E%3Cimg%20onerror%3D1%3E')).text();
    expect(labelled).not.toContain('<img');
  });

  it('when the project or the environment is unknown, then both answer the same 404 badge image', async () => {
    const unknownEnvironment = await badge('nowhere.svg');
    const unknownProject = await fetch(`${server.url}/badges/999999/passing-env.svg`);
    expect(unknownEnvironment.status).toBe(404);
    expect(unknownProject.status).toBe(404);
    expect(unknownEnvironment.headers.get('content-type')).toContain('image/svg+xml');
    const body = await unknownEnvironment.text();
    expect(body).toContain('not found');
    expect(await unknownProject.text()).toBe(body);
  });

  it('when the metric is tests or pass-rate, then the message gives the counts or the 7-day rate', async () => {
    expect(await (await badge('failing-env.svg?metric=tests')).text()).toContain('5 passed, 2 failed, 1 skipped</title>');
    const env = await environment('weekly', 'Weekly');
    for (const state of ['passed', 'passed', 'passed', 'failed']) await finishedRun(env, state, DAY);
    await finishedRun(env, 'failed', 8 * DAY);
    await finishedRun(env, 'cancelled', DAY);
    expect(await (await badge('weekly.svg?metric=pass-rate')).text()).toContain('Weekly: 75%</title>');
    expect(await (await badge('empty-env.svg?metric=pass-rate')).text()).toContain('no runs</title>');
  });

  it('when label and colours are given, then they override the defaults', async () => {
    const svg = await (await badge('passing-env.svg?label=e2e&color=ff69b4&labelColor=blue')).text();
    expect(svg).toContain('<title>e2e: passing</title>');
    expect(svg).toContain('fill="#ff69b4"');
  });

  it.each([
    ['passing-env.svg?style=round', 'query.style'],
    ['passing-env.svg?metric=coverage', 'query.metric'],
    ['passing-env.svg?color=not-a-colour', 'query.color'],
    ['passing-env.svg?size=big', 'query'],
    ['passing-env.gif', 'path.file'],
    ['passing-env.png?scale=3', 'query.scale'],
  ])('when the request is %s, then it is a 400 naming %s', async (path, field) => {
    const response = await badge(path);
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body).toEqual({ data: null, error: { message: expect.stringContaining(field) } });
  });
});

describe('PNG badges', () => {
  it("when a PNG is asked for, then it is a PNG of the SVG's size, doubled at scale 2, with text drawn", async () => {
    const svg = await (await badge('passing-env.svg')).text();
    const width = Number(/width="(\d+)"/.exec(svg)?.[1]);
    const one = await badge('passing-env.png');
    expect(one.status).toBe(200);
    expect(one.headers.get('content-type')).toBe('image/png');
    const png = Buffer.from(await one.arrayBuffer());
    expect(hasPngSignature(png)).toBe(true);
    const image = decodePng(png);
    expect([image.width, image.height]).toEqual([width, 20]);
    expect(countTextPixels(image, 0, image.width)).toBeGreaterThan(40);
    const two = decodePng(Buffer.from(await (await badge('passing-env.png?scale=2')).arrayBuffer()));
    expect([two.width, two.height]).toEqual([width * 2, 40]);
    expect(countTextPixels(two, 0, two.width)).toBeGreaterThan(4 * 40);
  });
});

describe('JSON endpoint badge', () => {
  it('when one client asks for PNGs of ever new labels, then past its budget it gets 429 with Retry-After, while made badges and other clients are served', async () => {
    const from = (client: string) => ({ 'x-forwarded-for': client });
    const statuses: number[] = [];
    for (let i = 0; i < 45; i++) statuses.push((await badge(`passing-env.png?label=flood-${i}`, from('203.0.113.7'))).status);
    expect(statuses.slice(0, 30)).toEqual(Array(30).fill(200));
    expect(statuses.slice(30)).toEqual(Array(15).fill(429));
    const refused = await badge('passing-env.png?label=flood-99', from('203.0.113.7'));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await badge('passing-env.png?label=flood-3', from('203.0.113.7'))).status).toBe(200);
    expect((await badge('passing-env.svg?label=flood-99', from('203.0.113.7'))).status).toBe(200);
    expect((await badge('passing-env.png?label=flood-99', from('203.0.113.8'))).status).toBe(200);
  });

  it('when .json is asked for, then it is a shields.io endpoint badge', async () => {
    const response = await badge('failing-env.json');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ schemaVersion: 1, label: 'Staging', message: 'failing', color: 'red' });
  });
});

describe('caching', () => {
  it('when a badge is asked for again, then it carries an ETag and cache headers, answers 304 and is not drawn again', async () => {
    const first = await badge('passing-env.svg?style=plastic');
    const etag = first.headers.get('etag') as string;
    expect(etag).toMatch(/^".+"$/);
    expect(first.headers.get('cache-control')).toBe('public, max-age=60, s-maxage=60, stale-while-revalidate=300');
    await badge('passing-env.png?style=plastic');
    const drawn = { ...renderCounts };
    for (let i = 0; i < 5; i++) {
      expect((await badge('passing-env.svg?style=plastic')).headers.get('etag')).toBe(etag);
      expect((await badge('passing-env.png?style=plastic')).status).toBe(200);
    }
    expect(renderCounts).toEqual(drawn);
    const notModified = await badge('passing-env.svg?style=plastic', { 'if-none-match': etag });
    expect(notModified.status).toBe(304);
    expect(await notModified.text()).toBe('');
  });

  it('when the state changes, then the ETag changes', async () => {
    const env = await environment('changing', 'Changing');
    await finishedRun(env, 'passed', 2000);
    const before = (await badge('changing.svg')).headers.get('etag');
    await finishedRun(env, 'failed', 1000);
    const after = await badge('changing.svg', { 'if-none-match': before as string });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(before);
    expect(await after.text()).toContain('failing');
  });
});

describe('in a browser', () => {
  it('when the SVG is opened in Chromium, then its text is laid out and visible', async () => {
    const browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
    try {
      const page = await browser.newPage();
      await page.goto(`${server.url}/badges/${projectId}/failing-env.svg`);
      const texts = await page.evaluate(() =>
        [...document.querySelectorAll('text')]
          .filter((t) => !t.closest('[aria-hidden]'))
          .map((t) => ({ text: t.textContent, width: (t as SVGTextElement).getComputedTextLength() })),
      );
      expect(texts.map((t) => t.text)).toEqual(['Staging', 'failing']);
      expect(texts.every((t) => t.width > 10)).toBe(true);
      const shot = decodePng(await page.screenshot({ clip: { x: 0, y: 0, width: 120, height: 20 }, omitBackground: true }));
      expect(countTextPixels(shot, 0, shot.width)).toBeGreaterThan(20);
    } finally {
      await browser.close();
    }
  });
});
