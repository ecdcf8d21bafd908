// Which source files each of the README's pictures shows, and their hashes: `npm run pictures`
// records them in docs/pictures/manifest.json, and test/docs/pictures.test.ts recomputes them to
// tell a picture older than its page.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const PICTURES_DIR = path.join(ROOT, 'docs', 'pictures');
export const MANIFEST = path.join(PICTURES_DIR, 'manifest.json');
export const REGENERATE = 'npm run pictures';

/** The dashboard's stylesheet, whose @imports are followed: the pictures show its rules. */
const STYLESHEET = 'server/src/dashboard/client/styles/dashboard.css';

/** A picture of one page of the demo: the modules that render it, and the width it is shot at. */
export interface Picture {
  file: string;
  alt: string;
  width: number;
  height: number;
  /** The modules that make the page's HTML; the dashboard's modules they import are followed. */
  entries: string[];
}

export const PICTURES: Picture[] = [
  {
    file: 'run.png',
    alt: 'A run of the demo: its failures first, each try with its screenshot and trace',
    width: 1280,
    height: 1400,
    entries: ['server/src/dashboard/run-page.tsx', 'server/src/runs/page.tsx', STYLESHEET],
  },
  {
    file: 'compare.png',
    alt: 'Two runs of the demo compared',
    width: 1280,
    height: 900,
    entries: ['server/src/dashboard/compare-page.tsx', STYLESHEET],
  },
  {
    file: 'failure-group.png',
    alt: 'A failure group of the demo with its runs',
    width: 1280,
    height: 900,
    entries: ['server/src/dashboard/groups-page.tsx', STYLESHEET],
  },
  {
    file: 'run-mobile.png',
    alt: 'The same run on a phone',
    width: 390,
    height: 844,
    entries: ['server/src/dashboard/run-page.tsx', 'server/src/runs/page.tsx', STYLESHEET],
  },
];

const DASHBOARD = 'server/src/dashboard/';

/**
 * The files a picture shows: its entries and, followed from them, every dashboard module they
 * import for its values (a type changes no pixel). Imports of other features stop at their
 * barrel: a picture does not go stale when a store's query does.
 */
export function sourcesOf(picture: Picture): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    // A module's imports for their values, and a stylesheet's @import.
    for (const match of text.matchAll(/^(?:import\s+(?!type\s)[^;]*?from\s+|@import\s+)'(\.{1,2}\/[^']+)';/gms)) {
      const target = path.posix.join(path.posix.dirname(file), match[1] as string);
      if (target.startsWith(DASHBOARD)) visit(target);
    }
  };
  for (const entry of picture.entries) visit(entry);
  return [...seen].sort();
}

/** Each source's sha256, by its path from the repository's root. */
export function hashesOf(sources: string[]): Record<string, string> {
  return Object.fromEntries(
    sources.map((file) => [
      file,
      createHash('sha256')
        .update(fs.readFileSync(path.join(ROOT, file)))
        .digest('hex'),
    ]),
  );
}

export interface Manifest {
  command: string;
  pictures: Record<string, { width: number; sources: Record<string, string> }>;
}
