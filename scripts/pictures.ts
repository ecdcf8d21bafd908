// `npm run pictures`: the README's pictures, shot in Chromium from the demo as a newcomer meets it.
// A fresh `proctor serve` (embedded PostgreSQL in a scratch data directory) seeds its demo project;
// two runs of the sample suite are triggered and run by its executor; then its run page, the two
// runs compared and a failure group are shot at 1280 px, and the run page at 390 px, into
// docs/pictures/, with manifest.json recording the hashes of the sources each picture shows.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Page } from '@playwright/test';
import { client } from '../test/helpers/http.ts';
import { printed, runToEnd } from '../test/helpers/demo.ts';
import { CHROMIUM_LAUNCH_OPTIONS } from '../test/helpers/playwright.ts';
import { freePort, spawnProctor, waitForHealth } from '../test/helpers/process.ts';
import { hashesOf, type Manifest, MANIFEST, PICTURES, PICTURES_DIR, REGENERATE, ROOT, sourcesOf } from './picture-sources.ts';

const MAX_BYTES = 300 * 1024;

/** Waits until the images in view have loaded, so that a screenshot shows them. */
async function settled(page: Page): Promise<void> {
  await page.waitForLoadState('networkidle');
  await page.waitForFunction(() =>
    [...document.images].every((img) => img.getBoundingClientRect().top > window.innerHeight || (img.complete && img.naturalWidth > 0)),
  );
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-pictures-'));
  fs.chmodSync(dataDir, 0o711);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = spawnProctor(['serve'], { DATABASE_URL: '', PROCTOR_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: url });
  const browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
  try {
    await waitForHealth(url);
    const key = await printed(server.output, /prc_p_[0-9a-f]{12}_[0-9a-f]{48}/);
    const signIn = await printed(server.output, /\/sign-in\/link\?token=\S+/);
    const api = client(url, key);
    const projectId = (await api.get('/api/environments')).body.data.environments[0].project_id as number;
    const first = await runToEnd(api, 'local');
    const second = await runToEnd(api, 'local');
    console.log(`demo runs #${first} and #${second} ended`);
    const details = (await api.get(`/api/test-runs/${second}`)).body.data.test_run.flattenedSummaryDetails as {
      status: string;
      failure_group_id: string | null;
    }[];
    const group = details.find((d) => d.status === 'failed' && d.failure_group_id)?.failure_group_id;
    if (!group) throw new Error(`the demo's run #${second} has no failure group`);
    const pages: Record<string, string> = {
      'run.png': `/projects/${projectId}/runs/${second}`,
      'compare.png': `/projects/${projectId}/runs/${second}/compare/${first}`,
      'failure-group.png': `/projects/${projectId}/failure-groups/${encodeURIComponent(group)}`,
      'run-mobile.png': `/projects/${projectId}/runs/${second}`,
    };
    // The sign-in link works once: one context signs in, and the others start from its cookies.
    const signingIn = await browser.newContext();
    await (await signingIn.newPage()).goto(`${url}${signIn}`);
    const storageState = await signingIn.storageState();
    await signingIn.close();
    fs.mkdirSync(PICTURES_DIR, { recursive: true });
    const manifest: Manifest = { command: REGENERATE, pictures: {} };
    for (const picture of PICTURES) {
      const context = await browser.newContext({ viewport: { width: picture.width, height: picture.height }, deviceScaleFactor: 1, storageState });
      const page = await context.newPage();
      await page.goto(`${url}${pages[picture.file]}`);
      await settled(page);
      const target = path.join(PICTURES_DIR, picture.file);
      await page.screenshot({ path: target, type: 'png' });
      await context.close();
      const size = fs.statSync(target).size;
      if (size > MAX_BYTES) throw new Error(`${picture.file} is ${size} bytes, over ${MAX_BYTES}`);
      manifest.pictures[picture.file] = { width: picture.width, sources: hashesOf(sourcesOf(picture)) };
      console.log(`${path.relative(ROOT, target)} (${Math.round(size / 1024)} kB)`);
    }
    fs.writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
    console.log(path.relative(ROOT, MANIFEST));
  } finally {
    await browser.close();
    server.child.kill('SIGTERM');
    await server.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
