import fs from 'node:fs';
import path from 'node:path';
import { installedPlaywright, packageRoot, proctorPlaywright } from './packages.ts';

/** Each folder from the root down to `dir` must be traversable by others, or the runner cannot reach it. */
export function unreachableAncestor(dir: string): string | null {
  for (let current = path.dirname(dir); ; current = path.dirname(current)) {
    if ((fs.statSync(current).mode & 0o001) === 0) return current;
    if (current === path.dirname(current)) return null;
  }
}

/**
 * Proctor's own packages that a suite's processes load: the reporter always, and Playwright for a
 * suite that has none of its own.
 */
type Installed = Map<string, string>;

/** Where each package is installed, each found from the one that depends on it. */
function installedPackages(): Installed {
  const installed: Installed = new Map([['@proctor/reporter', packageRoot('@proctor/reporter', import.meta.url)]]);
  const playwright = proctorPlaywright();
  if (playwright) {
    installed.set('@playwright/test', playwright.test);
    installed.set('playwright', playwright.playwright);
    installed.set('playwright-core', playwright.core);
  }
  return installed;
}

/** The node_modules folder that holds the copy, under the executor's work root. */
export function stagedModules(workRoot: string): string {
  return path.join(workRoot, 'toolchain', 'node_modules');
}

function stampOf(installed: Installed): string {
  const entries = [...installed].map(([name, dir]) => {
    const { version } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string };
    return [name, dir, version];
  });
  return JSON.stringify(entries);
}

/**
 * A server running as root hands suites to another user, who must read these packages. Where
 * Proctor is installed somewhere that user cannot reach (root's npx cache under /root, which is
 * mode 700), they are copied under the work root once per set of versions, and resolved from
 * there. Returns that node_modules folder, or null to resolve them where they are installed.
 */
export function stageToolchain(workRoot: string, runnerIsAnotherUser: boolean): string | null {
  if (!runnerIsAnotherUser) return null;
  const installed = installedPackages();
  if ([...installed.values()].every((dir) => unreachableAncestor(path.join(dir, 'package.json')) === null)) return null;
  const target = stagedModules(workRoot);
  const stamp = stampOf(installed);
  const marker = path.join(target, '.proctor-toolchain');
  if (fs.existsSync(marker) && fs.readFileSync(marker, 'utf8') === stamp) return target;
  // Copied aside and renamed into place: a copy cut short is never taken for a whole one.
  const partial = `${target}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  for (const [name, dir] of installed) fs.cpSync(dir, path.join(partial, name), { recursive: true, dereference: true });
  fs.writeFileSync(path.join(partial, '.proctor-toolchain'), stamp);
  const previous = `${target}.previous-${process.pid}`;
  if (fs.existsSync(target)) fs.renameSync(target, previous);
  fs.renameSync(partial, target);
  fs.rmSync(previous, { recursive: true, force: true });
  return target;
}

/** The node_modules folder from which another user reads Proctor's Playwright: the copy, or where it is installed. */
export function runnerModules(workRoot: string): string {
  const staged = stageToolchain(workRoot, true);
  if (staged) return staged;
  return path.dirname(path.dirname(installedPlaywright().test));
}
