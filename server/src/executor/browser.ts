import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/** What a system Chromium is called on PATH, the headless build first. */
const SYSTEM_CHROMIUM_NAMES = ['chromium-headless-shell', 'chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

export const NO_CHROMIUM_REASON =
  'no Chromium can be launched on this server: run `npx playwright install chromium` where Playwright can download its browser, ' +
  "or install a system Chromium (Debian: `apt-get install chromium`) and point the suite's launchOptions.executablePath at it";

/** The executables a Playwright Chromium download holds, by the folder layouts of its builds. */
const DOWNLOADED_EXECUTABLES = [
  'chrome-linux/chrome',
  'chrome-linux64/chrome',
  'chrome-linux/headless_shell',
  'chrome-headless-shell-linux64/chrome-headless-shell',
];

/** The Chromium builds `npx playwright install` left where the suite's Playwright looks (PLAYWRIGHT_BROWSERS_PATH, else the home's cache). */
function playwrightDownloads(env: NodeJS.ProcessEnv): string[] {
  const root = env.PLAYWRIGHT_BROWSERS_PATH || (env.HOME ? path.join(env.HOME, '.cache', 'ms-playwright') : null);
  if (!root || !fs.existsSync(root)) return [];
  return fs
    .readdirSync(root)
    .filter((folder) => folder.startsWith('chromium'))
    .flatMap((folder) => DOWNLOADED_EXECUTABLES.map((executable) => path.join(root, folder, executable)));
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

async function starts(executable: string): Promise<boolean> {
  try {
    await promisify(execFile)(executable, ['--version'], { timeout: 15_000 });
    return true;
  } catch {
    return false;
  }
}

/**
 * A Chromium that starts on this host, as the suites run with `env`: Playwright's own download
 * first, then a system Chromium on PATH; null when there is none.
 */
export async function findChromium(env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  const candidates = [...playwrightDownloads(env), ...SYSTEM_CHROMIUM_NAMES.map((name) => onPath(name, env))];
  for (const candidate of candidates) {
    if (candidate && fs.existsSync(candidate) && (await starts(candidate))) return candidate;
  }
  return null;
}

/** Whether the suites of this server find a Chromium: looked for at start, and again before each run until one is found. */
export class ChromiumCheck {
  private found: string | null = null;

  constructor(private readonly suiteEnvironment: () => NodeJS.ProcessEnv) {}

  /** Why runs cannot run now, or null when a Chromium starts. */
  async missing(): Promise<string | null> {
    if (this.found && fs.existsSync(this.found)) return null;
    this.found = await findChromium(this.suiteEnvironment());
    return this.found ? null : NO_CHROMIUM_REASON;
  }
}
