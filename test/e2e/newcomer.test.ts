import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { CHROMIUM_LAUNCH_OPTIONS, ROOT } from '../helpers/playwright.ts';
import { spawnProctor } from '../helpers/process.ts';
import { runIdLinkedIn, waitForRun } from '../helpers/runs.ts';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

// A newcomer follows the README's "Add the reporter to your CI" word for word: a fresh Playwright
// project of their own (outside this repository), the reporter installed from its packed tarball,
// the README's reporter line in playwright.config.ts (only the server's URL is this test's), a
// project made with `proctor project create` (no repository: it only receives reports), a key of
// scope `report` made as the README says, and an environment that does not exist yet. Every
// result must be stored. Nothing downloads here: @playwright/test is this repository's, linked.
const run = promisify(execFile);

let server: TestServer;
let scratch: string;

beforeAll(async () => {
  server = await startTestServer({ clock: new TestClock('live') });
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-newcomer-'));
});
afterAll(async () => {
  await server?.close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** The README's section, from its heading to the next. */
function readmeSection(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('## Add the reporter to your CI');
  return readme.slice(start, readme.indexOf('\n## ', start + 1));
}

async function proctor(...args: string[]): Promise<string> {
  const cli = spawnProctor(args, { DATABASE_URL: server.db.url, PORT: '', PUBLIC_URL: '' });
  const code = await cli.exited;
  if (code !== 0) throw new Error(`proctor ${args.join(' ')} exited ${code}: ${cli.output()}`);
  return cli.output().trim();
}

describe("the README's reporter section, followed by a newcomer", () => {
  it("when a fresh Playwright project installs the packed reporter with the README's config, a report key and a new environment, then every result is stored", async () => {
    const section = readmeSection();
    const install = /```sh\n(npm install --save-dev @proctor\/reporter)\n```/.exec(section)?.[1];
    const reporterLine = /```ts\n\/\/ playwright\.config\.ts\n(reporter: .*)\n```/.exec(section)?.[1];
    const keyCommand = /`(npx proctor key create --project 1 --scope report)`/.exec(section)?.[1];
    expect(install).toBe('npm install --save-dev @proctor/reporter');
    expect(reporterLine).toContain("'@proctor/reporter'");
    expect(keyCommand).toBeDefined();
    const environment = /environment: '([^']+)'/.exec(reporterLine as string)?.[1] as string;

    // The project's own folder: its package.json, the reporter from its tarball (the registry's stand-in).
    const project = path.join(scratch, 'shop');
    fs.mkdirSync(path.join(project, 'tests'), { recursive: true });
    fs.writeFileSync(path.join(project, 'package.json'), `${JSON.stringify({ name: 'shop', private: true, type: 'module' }, null, 2)}\n`);
    const packed = JSON.parse(
      (await run('npm', ['pack', '--ignore-scripts', '-w', '@proctor/reporter', '--json', '--pack-destination', scratch], { cwd: ROOT })).stdout,
    ) as { filename: string }[];
    const tarball = path.join(scratch, path.basename((packed[0] as { filename: string }).filename));
    const [npm, ...installArgs] = (install as string).replace('@proctor/reporter', tarball).split(' ');
    await run(npm as string, [...installArgs, '--offline', '--legacy-peer-deps', '--no-audit', '--no-fund'], { cwd: project, timeout: 120_000 });
    fs.mkdirSync(path.join(project, 'node_modules/@playwright'), { recursive: true });
    fs.symlinkSync(path.join(ROOT, 'node_modules/@playwright/test'), path.join(project, 'node_modules/@playwright/test'), 'dir');

    // The README's reporter line, word for word but for the URL of this test's server.
    const line = (reporterLine as string).replace('https://proctor.example.com', server.url);
    fs.writeFileSync(
      path.join(project, 'playwright.config.ts'),
      `import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: './tests',
  retries: 1,
  use: { launchOptions: ${JSON.stringify(CHROMIUM_LAUNCH_OPTIONS)} },
  ${line}
});
`,
    );
    fs.writeFileSync(
      path.join(project, 'tests/shop.spec.ts'),
      `import { expect, test } from '@playwright/test';
test('shows the title', async ({ page }) => {
  await page.setContent('<h1>Shop</h1>');
  await expect(page.locator('h1')).toHaveText('Shop');
});
test('adds to the cart', () => expect(1 + 1).toBe(2));
test('pays', () => expect('paid').toBe('refunded'));
test('flakes once', ({}, info) => expect(info.retry).toBe(1));
test.skip('saved cards', () => {});
test('totals the cart @smoke', () => expect([1, 2].length).toBe(2));
test('applies a coupon', () => expect(10 * 0.9).toBe(9));
`,
    );

    // The server's side, as the README and docs/cli.md say: a project without a repository, a report key.
    const projectId = await proctor('project', 'create', '--name', 'Shop');
    const key = await proctor(...(keyCommand as string).replace('--project 1', `--project ${projectId}`).split(' ').slice(2));
    expect(key).toMatch(/^prc_p_/);
    const api = client(server.url, key);
    expect((await api.get('/api/environments')).body.data.environments).toEqual([]);

    const child = spawn(process.execPath, [path.join(project, 'node_modules/@playwright/test/cli.js'), 'test'], {
      cwd: project,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PROCTOR_API_KEY: key, CI: '', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
    // One test fails: Playwright exits 1, and the reporter leaves that as it is.
    expect(exitCode, output).toBe(1);
    const delivered = /\[proctor\] (\d+)\/(\d+) results delivered to run #1 \(failed\)/.exec(output);
    expect(delivered, output).not.toBeNull();
    expect(delivered?.[1]).toBe(delivered?.[2]);
    expect(output).not.toContain('not delivered');
    // The environment is new: it has no snoozes, and its first run must not say they could not be read.
    expect(output).not.toContain('could not be read');

    // The project's first run is #1 in the line, as on its page; the line's link carries its id.
    const stored = await waitForRun(api, runIdLinkedIn(output, /results delivered to /));
    expect(stored.testRun.number).toBe(1);
    expect(stored.testRun).toMatchObject({
      state: 'failed',
      environment_slug: environment,
      environment_name: environment,
      total_count: 7,
      success_count: 4,
      failed_count: 1,
      flaky_count: 1,
      skipped_count: 1,
    });
    expect(stored.flattenedSummaryDetails.map((d: { title: string; status: string }) => `${d.title}: ${d.status}`).sort()).toEqual([
      'adds to the cart: passed',
      'applies a coupon: passed',
      'flakes once: flaky',
      'pays: failed',
      'saved cards: skipped',
      'shows the title: passed',
      'totals the cart @smoke: passed',
    ]);
    const [made] = (await client(server.url, key).get('/api/environments')).body.data.environments;
    expect(made).toMatchObject({ slug: environment, name: environment });
  }, 300_000);
});
