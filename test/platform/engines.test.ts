import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/playwright.ts';

// npm warns EBADENGINE when a package's engines field leaves out the Node it installs on. The Node
// lines the README lists are held against every package the lockfile installs: the repository's
// own tooling from the minimum the root's engines name on each line, and what the published
// packages install (no dev dependency) from the first release of each line.

interface Locked {
  version?: string;
  dev?: boolean;
  engines?: { node?: string } | string[];
}

const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8')) as T;
const lock = readJson<{ packages: Record<string, Locked> }>('package-lock.json');
const engineOf = (file: string) => readJson<{ engines: { node: string } }>(file).engines.node;

/** The majors of "Node 20 (20.19 or later), 22 (22.13 or later) or 24" in the README's quick start. */
function listedMajors(): number[] {
  const line = /On a machine with Node (.+?) and Debian/.exec(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').replace(/\n/g, ' '))?.[1] ?? '';
  return [...line.replace(/\([^)]*\)/g, '').matchAll(/\b(\d{2})\b/g)].map((m) => Number(m[1]));
}

/** The lowest release of a major that a range allows (minors up to 40 are enough for any line so far). */
function lowestOnLine(range: string, major: number): string | null {
  for (let minor = 0; minor <= 40; minor++) if (semver.satisfies(`${major}.${minor}.0`, range)) return `${major}.${minor}.0`;
  return null;
}

function refusing(version: string, runtimeOnly: boolean): string[] {
  return Object.entries(lock.packages)
    .filter(([name, pkg]) => name !== '' && !(runtimeOnly && pkg.dev))
    .filter(([, pkg]) => typeof (pkg.engines as { node?: string } | undefined)?.node === 'string')
    .filter(([, pkg]) => !semver.satisfies(version, (pkg.engines as { node: string }).node))
    .map(([name, pkg]) => `${name}@${pkg.version} wants node ${(pkg.engines as { node: string }).node}`);
}

describe('the Node versions the README lists', () => {
  const majors = listedMajors();

  it('when the README is read, then it lists three Node lines, the active LTS among them', () => {
    expect(majors).toEqual([20, 22, 24]);
  });

  it("when a listed line's lowest supported release installs the repository, then no package's engines refuse it", () => {
    for (const major of majors) {
      const lowest = lowestOnLine(engineOf('package.json'), major);
      expect(lowest, `the root's engines allow Node ${major}`).not.toBeNull();
      expect(refusing(lowest as string, false), `on Node ${lowest}`).toEqual([]);
    }
  });

  it('when the published packages install on the first release of a listed line, then none of what they bring refuses it', () => {
    for (const file of ['server/package.json', 'reporter/package.json'])
      expect(semver.minVersion(engineOf(file))?.major).toBeLessThanOrEqual(majors[0] as number);
    for (const major of majors) expect(refusing(`${major}.0.0`, true), `on Node ${major}.0.0`).toEqual([]);
  });

  it("when a dependency's engines leave a listed line out, then the check names it", () => {
    expect(semver.satisfies('20.19.0', '>=22')).toBe(false);
    const saved = lock.packages['node_modules/express'] as Locked;
    lock.packages['node_modules/express'] = { ...saved, engines: { node: '>=22' } };
    try {
      expect(refusing('20.0.0', true)).toEqual([`node_modules/express@${saved.version} wants node >=22`]);
    } finally {
      lock.packages['node_modules/express'] = saved;
    }
  });
});
