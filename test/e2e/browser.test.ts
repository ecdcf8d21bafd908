import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { freePort, spawnProctor, waitForHealth } from '../helpers/process.ts';
import { waitForRun } from '../helpers/runs.ts';

// A host with no Chromium: a PATH of every program this machine has but the browsers, and a
// Playwright browsers folder with nothing downloaded in it.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-no-browser-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

function pathWithoutBrowsers(): string {
  const bin = path.join(scratch, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter((d) => fs.existsSync(d))) {
    for (const name of fs.readdirSync(dir)) {
      if (/chrom|google-chrome/i.test(name) || fs.existsSync(path.join(bin, name))) continue;
      fs.symlinkSync(path.join(dir, name), path.join(bin, name));
    }
  }
  return bin;
}

const NO_BROWSER = 'no Chromium can be launched on this server';

async function serveWithoutBrowser(name: string, env: Record<string, string>) {
  const browsers = path.join(scratch, `${name}-browsers`);
  fs.mkdirSync(browsers);
  const port = await freePort();
  const server = spawnProctor(['serve'], {
    DATABASE_URL: '',
    PROCTOR_DATA_DIR: path.join(scratch, name),
    PORT: String(port),
    PATH: pathWithoutBrowsers(),
    PLAYWRIGHT_BROWSERS_PATH: browsers,
    PROCTOR_EXECUTOR_POLL_MS: '200',
    ...env,
  });
  await waitForHealth(`http://127.0.0.1:${port}`);
  return { server, url: `http://127.0.0.1:${port}` };
}

/** The demo project's key, printed once the server listens and has seeded it. */
async function demoKey(output: () => string): Promise<string | undefined> {
  for (let tries = 0; tries < 100; tries++) {
    const key = /prc_p_[0-9a-f]{12}_[0-9a-f]{48}/.exec(output())?.[0];
    if (key) return key;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return undefined;
}

const startLines = (output: string) => output.split('\n').filter((line) => line.includes(`"msg":"${NO_BROWSER}`));

describe('a server with no browser', () => {
  it('when it executes runs, then it says so once at start, naming both ways to get one, and a triggered run ends error with that reason', async () => {
    const { server, url } = await serveWithoutBrowser('executes', {});
    try {
      const key = await demoKey(server.output);
      expect(key, server.output()).toBeDefined();
      const api = client(url, key);
      const triggered = await api.put('/api/test-runs', { environment: 'local' });
      expect(triggered.status).toBe(200);
      const run = await waitForRun(api, triggered.body.data.test_run.id, undefined, 60_000);
      expect(run.testRun.state).toBe('error');
      expect(run.testRun.error_reason).toContain(NO_BROWSER);
      expect(run.testRun.total_count).toBe(0);
      const lines = startLines(server.output());
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('npx playwright install chromium');
      expect(lines[0]).toContain('apt-get install chromium');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('when it only serves (PROCTOR_EXECUTOR_CONCURRENCY=0), then it says nothing about browsers', async () => {
    const { server } = await serveWithoutBrowser('serves', { PROCTOR_EXECUTOR_CONCURRENCY: '0' });
    try {
      // The check runs as the executor starts, after the server listens: give it the time it takes.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(server.output()).not.toMatch(/chromium/i);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
