import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The documentation is read by people setting Proctor up: the configuration reference has one
// source (the server's configuration), and every link between the pages resolves.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** The variables a text names: PORT, HOST, DATABASE_URL, PUBLIC_URL, LOG_LEVEL and every PROCTOR_… and AWS_…. */
function variablesIn(text: string): Set<string> {
  return new Set(text.match(/\b((?:PROCTOR|AWS)_[A-Z0-9_]+|PORT|HOST|DATABASE_URL|PUBLIC_URL|LOG_LEVEL)\b/g) ?? []);
}

describe('the documentation', () => {
  it("when the server's configuration is read, then docs/configuration.md documents every variable it reads, and no other", () => {
    const configuration = variablesIn(read('server/src/config.ts'));
    const rows = read('docs/configuration.md')
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split('|')[1] as string);
    const documented = new Set(rows.flatMap((cell) => [...variablesIn(cell)]));
    expect([...configuration].filter((name) => !documented.has(name)).sort()).toEqual([]);
    expect([...documented].filter((name) => !configuration.has(name)).sort()).toEqual([]);
    expect(configuration.size).toBeGreaterThan(40);
  });

  it('when the README and docs/ link to each other, then every relative link resolves to a file (and an anchor to a heading)', () => {
    const pages = [
      'README.md',
      ...fs
        .readdirSync(path.join(ROOT, 'docs'))
        .filter((file) => file.endsWith('.md'))
        .map((file) => `docs/${file}`),
    ];
    const broken: string[] = [];
    let links = 0;
    for (const page of pages) {
      for (const [, target] of read(page).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target as string)) continue;
        links++;
        const [file, anchor] = (target as string).split('#') as [string, string | undefined];
        const resolved = file ? path.join(path.dirname(page), file) : page;
        if (!fs.existsSync(path.join(ROOT, resolved))) {
          broken.push(`${page}: ${target}`);
          continue;
        }
        if (anchor && resolved.endsWith('.md')) {
          const slugs = read(resolved)
            .split('\n')
            .filter((line) => line.startsWith('#'))
            .map((line) =>
              line
                .replace(/^#+\s*/, '')
                .toLowerCase()
                .replace(/[^\w\s-]/g, '')
                .replace(/\s/g, '-'),
            );
          if (!slugs.includes(anchor)) broken.push(`${page}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(links).toBeGreaterThan(15);
  });

  it('when the README is read, then it is a front door: at most about 150 lines', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(150);
  });
});
