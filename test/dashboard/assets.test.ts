import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboardAssets, CLIENT_DIR } from '../../server/scripts/build-dashboard.mjs';
import { startTestServer, type TestServer } from '../helpers/server.ts';

// The dashboard's script and stylesheet are bundled at build time under names that hash their
// content, linked by the pages under those names and served to be kept for good.
let server: TestServer;
let scratch: string;

beforeAll(async () => {
  server = await startTestServer();
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-assets-'));
}, 60_000);

afterAll(async () => {
  await server?.close();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

/** The script and stylesheet a page links. */
function linked(html: string): { script: string; style: string } {
  const script = /<script src="(\/assets\/dashboard-[A-Z0-9]+\.js)" defer><\/script>/.exec(html)?.[1];
  // A void element as the page's renderer writes it: `<link …/>` (the same element as `<link …>`).
  const style = /<link rel="stylesheet" href="(\/assets\/dashboard-style-[A-Z0-9]+\.css)"\/?>/.exec(html)?.[1];
  if (!script || !style) throw new Error(`the page links no hashed script or stylesheet:\n${html}`);
  return { script, style };
}

describe('the assets a page links', () => {
  it('when a page is served, then it links its script and stylesheet by hashed name, and its policy allows no inline style or script', async () => {
    const response = await fetch(`${server.url}/sign-in`);
    const html = await response.text();
    const policy = response.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("style-src 'self'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toContain('unsafe-inline');
    expect(html).not.toMatch(/<style|style="/);
    const manifest = JSON.parse(fs.readFileSync(path.join(CLIENT_DIR, '../../../dist/dashboard-assets/manifest.json'), 'utf8'));
    expect(linked(html)).toEqual({ script: `/assets/${manifest['dashboard.js']}`, style: `/assets/${manifest['dashboard.css']}` });
  });

  it('when the hashed script and stylesheet are asked for, then they are served to be cached for a year and never asked again', async () => {
    const { script, style } = linked(await (await fetch(`${server.url}/sign-in`)).text());
    for (const [asset, type] of [
      [script, 'text/javascript; charset=utf-8'],
      [style, 'text/css; charset=utf-8'],
    ] as const) {
      const response = await fetch(`${server.url}${asset}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(response.headers.get('content-type')).toBe(type);
      expect((await response.text()).length).toBeGreaterThan(1000);
    }
  });

  it('when an asset the build did not make is asked for, then there is none', async () => {
    expect((await fetch(`${server.url}/assets/dashboard-AAAAAAAA.js`)).status).toBe(404);
    expect((await fetch(`${server.url}/assets/manifest.json`)).status).toBe(404);
    expect((await fetch(`${server.url}/assets/dashboard.js`)).status).toBe(404);
  });
});

/**
 * A copy of the browser's code to change, laid out as in server/src: the client folder and the
 * server modules it shares (the charts are drawn by the same code on both sides).
 */
function copyClient(name: string): string {
  const src = path.dirname(path.dirname(CLIENT_DIR));
  const root = path.join(scratch, name);
  const client = path.join(root, 'dashboard/client');
  fs.cpSync(CLIENT_DIR, client, { recursive: true });
  for (const shared of ['dashboard/charts.ts', 'dashboard/visual-summary.ts', 'xml.ts']) fs.cpSync(path.join(src, shared), path.join(root, shared));
  return client;
}

describe('building the assets', () => {
  it('when a stylesheet changes, then the stylesheet gets a new name and the script keeps its own; built again unchanged, both keep theirs', async () => {
    const client = copyClient('client');
    const before = await buildDashboardAssets({ clientDir: client, outDir: path.join(scratch, 'before') });
    const again = await buildDashboardAssets({ clientDir: client, outDir: path.join(scratch, 'again') });
    expect(again).toEqual(before);
    fs.appendFileSync(path.join(client, 'styles/tokens.css'), ':root { --space-8: 2rem; }\n');
    const after = await buildDashboardAssets({ clientDir: client, outDir: path.join(scratch, 'after') });
    expect(after['dashboard.css']).not.toBe(before['dashboard.css']);
    expect(after['dashboard.js']).toBe(before['dashboard.js']);
    expect(fs.readdirSync(path.join(scratch, 'after')).sort()).toEqual([after['dashboard.js'], after['dashboard.css'], 'manifest.json'].sort());
  });

  it('when the script changes, then it gets a new name', async () => {
    const client = copyClient('client-script');
    const before = await buildDashboardAssets({ clientDir: client, outDir: path.join(scratch, 'script-before') });
    fs.appendFileSync(path.join(client, 'main.ts'), "document.documentElement.dataset.changed = 'yes';\n");
    const after = await buildDashboardAssets({ clientDir: client, outDir: path.join(scratch, 'script-after') });
    expect(after['dashboard.js']).not.toBe(before['dashboard.js']);
    expect(after['dashboard.css']).toBe(before['dashboard.css']);
  });
});
