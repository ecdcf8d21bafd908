import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { ShardBeginBody, WireSnapshotLayout } from '../../reporter/src/api/wire.ts';
import { resolveSettings } from '../../reporter/src/reporter/settings.ts';
import { Uploader } from '../../reporter/src/reporter/uploader.ts';
import { listedTest } from '../helpers/attempts.ts';
import { REPORTER, ROOT } from '../helpers/playwright.ts';

const LAYOUT: WireSnapshotLayout = {
  platform: 'linux',
  config_dir: 'e2e',
  projects: [{ name: 'desktop', test_dir: 'tests', snapshot_dir: 'tests', path_template: null }],
};

describe('a server that does not know snapshot layouts', () => {
  it('when begin is refused for the snapshots field, then the list goes again without it and the run is reported', async () => {
    const begins: ShardBeginBody[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', () => {
        const body = JSON.parse(gunzipSync(Buffer.concat(chunks)).toString());
        res.setHeader('content-type', 'application/json');
        if (req.url?.endsWith('/begin')) {
          begins.push(body);
          // What a server before 0.4.0 (zod's strict objects) answers.
          if (body.snapshots) {
            res.statusCode = 400;
            return res.end(JSON.stringify({ data: null, error: { message: 'body: Unrecognized key: "snapshots"' } }));
          }
        }
        res.end(JSON.stringify({ data: { success: true, state: 'passed', summary_url: 'http://proctor.test/runs/5' } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const resolved = resolveSettings({ url, apiKey: 'k', maxAttempts: 1 }, { PROCTOR_RUN_ID: '5', PROCTOR_COMMIT: 'abc', PROCTOR_BRANCH: 'main' });
      if (!resolved.ok) throw new Error(resolved.reason);
      const uploader = new Uploader(resolved.settings);
      uploader.start({
        projectDir: '.',
        tests: [listedTest('a'.repeat(41))],
        complete: true,
        shard: 1,
        totalShards: 1,
        startedAt: new Date(),
        snapshots: LAYOUT,
      });
      const report = await uploader.finish('passed', []);
      expect(report.failures).toEqual([]);
      expect(report.state).toBe('passed');
      expect(begins.map((begin) => begin.snapshots ?? null)).toEqual([LAYOUT, null]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('the layout a real Playwright config gives', () => {
  it("when projects set snapshotPathTemplate, toHaveScreenshot's pathTemplate or neither, then begin carries each, the folders relative to the config's", async () => {
    const begins: ShardBeginBody[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', () => {
        if (req.url?.endsWith('/begin')) begins.push(JSON.parse(gunzipSync(Buffer.concat(chunks)).toString()));
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ data: { success: true, state: 'passed', summary_url: 'http://proctor.test/runs/5' } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
    const dir = fs.mkdtempSync(path.join(ROOT, '.tmp', 'layout-'));
    try {
      fs.mkdirSync(path.join(dir, '.git'));
      fs.mkdirSync(path.join(dir, 'e2e', 'specs'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'e2e', 'specs', 'a.spec.ts'), "import { test } from '@playwright/test';\ntest('a', () => {});\n");
      fs.writeFileSync(
        path.join(dir, 'e2e', 'playwright.config.ts'),
        `import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: './specs',
  snapshotPathTemplate: '{testDir}/__shots__/{testFilePath}/{arg}{ext}',
  projects: [
    { name: 'plain' },
    { name: 'own', snapshotDir: './snaps', expect: { toHaveScreenshot: { pathTemplate: 'shots/{projectName}/{arg}{ext}' } } },
  ],
});
`,
      );
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const listed = await promisify(execFile)(
        process.execPath,
        [path.join(ROOT, 'node_modules/@playwright/test/cli.js'), 'test', '--list', `--reporter=${REPORTER}`],
        {
          cwd: path.join(dir, 'e2e'),
          env: { ...process.env, PROCTOR_URL: url, PROCTOR_API_KEY: 'k', PROCTOR_RUN_ID: '5', CI: '', GITHUB_RUN_ID: '' },
        },
      );
      expect(begins.length, listed.stdout + listed.stderr).toBeGreaterThan(0);
      expect(begins[0]?.snapshots).toEqual({
        platform: process.platform,
        config_dir: 'e2e',
        projects: [
          { name: 'plain', test_dir: 'specs', snapshot_dir: 'specs', path_template: '{testDir}/__shots__/{testFilePath}/{arg}{ext}' },
          { name: 'own', test_dir: 'specs', snapshot_dir: 'snaps', path_template: 'shots/{projectName}/{arg}{ext}' },
        ],
      });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
