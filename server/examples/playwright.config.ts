import fs from 'node:fs';
import { defineConfig, devices } from '@playwright/test';

// A port of its own per invocation unless one is given, so that shards and runs side by side do not
// share a site; set in the environment so that Playwright's workers see the same one. It is drawn
// below Linux's ephemeral range (32768 up), where no outgoing connection can be holding it.
process.env.DEMO_SITE_PORT ??= String(20_000 + Math.floor(Math.random() * 12_000));
const port = Number(process.env.DEMO_SITE_PORT);
// Playwright cannot download its browser here; Debian's chromium is used where it is installed. Headless,
// its headless shell comes first (package chromium-headless-shell): the build Playwright itself runs
// headless, which starts in a third of the time. It opens no window, so not with --headed, --ui or --debug.
const headed = process.argv.some((arg) => ['--headed', '--ui', '--debug'].includes(arg));
const executablePath = [...(headed ? [] : ['/usr/bin/chromium-headless-shell']), '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((candidate) =>
  fs.existsSync(candidate),
);
const launchOptions = executablePath ? { executablePath } : {};
// Proctor passes a build's URL as PLAYWRIGHT_BASE_URL and BASE_URL; anything but an absolute URL is ignored.
const givenBaseUrl = [process.env.PLAYWRIGHT_BASE_URL, process.env.BASE_URL].find((url) => url && /^https?:\/\//.test(url));

export default defineConfig({
  testDir: './tests',
  retries: 1,
  timeout: 15_000,
  reporter: [['list']],
  use: {
    baseURL: givenBaseUrl ?? `http://127.0.0.1:${port}`,
    // A failed try keeps its screenshot and its trace, which the run page shows beside the failure.
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions,
  },
  projects: [
    { name: 'desktop', use: { ...devices['Desktop Chrome'], launchOptions } },
    { name: 'mobile', use: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, launchOptions } },
  ],
  webServer: {
    command: `node site/serve.mjs ${port}`,
    url: `http://127.0.0.1:${port}/healthz`,
    reuseExistingServer: true,
    timeout: 10_000,
  },
});
