// With `playwright test --list --reporter=<this file>`, writes every test of every runner project to
// PROCTOR_LIST_OUTPUT: each as the reporter lists it to Proctor (listTest), plus what `--test-list`
// needs to name it again (its file relative to rootDir, its exact title path). Proctor's executor
// and its environment sync list a suite with it.
import fs from 'node:fs';
import path from 'node:path';
import type { FullConfig, Reporter, Suite, TestCase, TestRun } from '@playwright/test/reporter';
import { listTest } from './collect.ts';
import { ownersResolver } from './owners.ts';
import type { WireListedTest } from '../api/wire.ts';

export interface RunnerListedTest extends WireListedTest {
  /** Relative to rootDir, as `--test-list` wants it. */
  file: string;
  /** The describes and the title, as written. */
  titles: string[];
  /** Whether it may run apart from the rest of its file (fully parallel), as Playwright's own shards split it. */
  parallel: boolean;
}

export interface RunnerListing {
  projects: string[];
  /** Each project's dependencies (setup projects), which Playwright runs before it. */
  dependencies: Record<string, string[]>;
  /** A setup project's teardown project, which Playwright runs after the projects that depend on the setup. */
  teardowns: Record<string, string>;
  tests: RunnerListedTest[];
  /** The config's webServer entries as loaded (an agent with --share-web-server starts them itself); absent from older listings. */
  web_servers?: ListedWebServer[];
}

/** A `webServer` entry of the config, its `cwd` resolved as Playwright resolves it (against the config's folder). */
export interface ListedWebServer {
  command: string | null;
  url: string | null;
  port: number | null;
  cwd: string;
  env: Record<string, string>;
  timeout: number;
  reuseExistingServer: boolean;
}

/** The config's webServer entries: an array is kept on Playwright's internal config only. */
function webServersOf(config: FullConfig, configDir: string): ListedWebServer[] {
  const internal = Object.getOwnPropertySymbols(config)
    .filter((symbol) => symbol.description === 'configInternalSymbol')
    .map((symbol) => (config as unknown as Record<symbol, { webServers?: unknown[] }>)[symbol])[0];
  const entries = (internal?.webServers ?? (config.webServer ? [config.webServer] : [])) as Record<string, unknown>[];
  return entries.map((entry) => ({
    command: typeof entry.command === 'string' ? entry.command : null,
    url: typeof entry.url === 'string' ? entry.url : null,
    port: typeof entry.port === 'number' ? entry.port : null,
    cwd: typeof entry.cwd === 'string' ? path.resolve(configDir, entry.cwd) : configDir,
    env: Object.fromEntries(Object.entries((entry.env ?? {}) as Record<string, unknown>).map(([name, value]) => [name, String(value)])),
    timeout: typeof entry.timeout === 'number' ? entry.timeout : 60_000,
    reuseExistingServer: entry.reuseExistingServer === true,
  }));
}

const posix = (file: string) => file.split(path.sep).join('/');

export default class ListReporter implements Reporter {
  private readonly parallel = new Set<TestCase>();

  /** Playwright answers a suite's execution mode here only (1.56 and later; before, every test stays with its file). */
  async preprocess({ suite, testRun }: { suite: Suite; testRun: TestRun }): Promise<void> {
    for (const test of suite.allTests()) if (testRun.mode(test.parent) === 'parallel') this.parallel.add(test);
  }

  onBegin(config: FullConfig, suite: Suite): void {
    // Paths in the inventory are relative to the config's folder, as the reporter reports them.
    const configDir = config.configFile ? path.dirname(config.configFile) : config.rootDir;
    const ownersOf = ownersResolver(configDir);
    const listing: RunnerListing = {
      projects: config.projects.map((project) => project.name),
      dependencies: Object.fromEntries(config.projects.map((project) => [project.name, project.dependencies])),
      teardowns: Object.fromEntries(config.projects.flatMap((project) => (project.teardown ? [[project.name, project.teardown]] : []))),
      web_servers: webServersOf(config, configDir),
      tests: suite.allTests().map((test) => ({
        ...listTest(test, configDir, ownersOf),
        file: posix(path.relative(config.rootDir, test.location.file)),
        titles: test.titlePath().slice(3),
        parallel: this.parallel.has(test),
      })),
    };
    fs.writeFileSync(process.env.PROCTOR_LIST_OUTPUT as string, JSON.stringify(listing));
  }

  printsToStdio(): boolean {
    return false;
  }
}
