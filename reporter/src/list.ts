// With `playwright test --list --reporter=<this file>`, writes every test of every runner project to
// PROCTOR_LIST_OUTPUT: each as the reporter lists it to Proctor (listTest), plus what `--test-list`
// needs to name it again (its file relative to rootDir, its exact title path). Proctor's executor
// and its environment sync list a suite with it.
import fs from 'node:fs';
import path from 'node:path';
import type { FullConfig, Reporter, Suite } from '@playwright/test/reporter';
import { listTest } from './collect.ts';
import type { WireListedTest } from './wire.ts';

export interface RunnerListedTest extends WireListedTest {
  /** Relative to rootDir, as `--test-list` wants it. */
  file: string;
  /** The describes and the title, as written. */
  titles: string[];
}

export interface RunnerListing {
  projects: string[];
  tests: RunnerListedTest[];
}

const posix = (file: string) => file.split(path.sep).join('/');

export default class ListReporter implements Reporter {
  onBegin(config: FullConfig, suite: Suite): void {
    // Paths in the inventory are relative to the config's folder, as the reporter reports them.
    const configDir = config.configFile ? path.dirname(config.configFile) : config.rootDir;
    const listing: RunnerListing = {
      projects: config.projects.map((project) => project.name),
      tests: suite.allTests().map((test) => ({
        ...listTest(test, configDir),
        file: posix(path.relative(config.rootDir, test.location.file)),
        titles: test.titlePath().slice(3),
      })),
    };
    fs.writeFileSync(process.env.PROCTOR_LIST_OUTPUT as string, JSON.stringify(listing));
  }

  printsToStdio(): boolean {
    return false;
  }
}
