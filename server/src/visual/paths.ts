import { createHash } from 'node:crypto';
import path from 'node:path';
import type { WireSnapshotLayout } from '@proctor/reporter/wire';

// Where Playwright looks for a screenshot's baseline, computed as Playwright computes it
// (TestInfo's snapshot path in 1.42 to 1.65): the project's template, else the default one, its
// tokens filled in with the test file's path relative to the project's testDir, the snapshot name,
// the sanitized project name and the platform, then resolved from the config's folder. Here every
// path is relative (the config's folder to the repository's root, the project's folders to the
// config's), so the answer is the file's path in the repository.

/** Playwright's template for `toHaveScreenshot` when the project sets none. */
export const DEFAULT_TEMPLATE = '{snapshotDir}/{testFileDir}/{testFileName}-snapshots/{arg}{-projectName}{-snapshotSuffix}{ext}';

/** Playwright's `sanitizeForFilePath`: runs of characters a file name may not hold become one `-`. */
export function sanitizeForFilePath(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\x00-\x2C\x2E-\x2F\x3A-\x40\x5B-\x60\x7B-\x7F]+/g, '-');
}

/** Playwright's `trimLongString`: a long text keeps its ends around a piece of its sha1. */
function trimLongString(text: string, length = 100): string {
  if (text.length <= length) return text;
  const middle = `-${createHash('sha1').update(text).digest('hex').slice(0, 5)}-`;
  const start = Math.floor((length - middle.length) / 2);
  return text.slice(0, start) + middle + text.slice(-(length - middle.length - start));
}

export interface SnapshotOf {
  /** The test's file, relative to the config's folder, as the reporter lists it. */
  filePath: string;
  runnerProject: string;
  /** The snapshot name without its extension, as the attachments name it (`banner` of `banner-expected.png`). */
  snapshotName: string;
  /** The test's title path below its file (describe blocks, then its title): for `{testName}`. */
  titles: string[];
}

export type BaselinePath = { ok: true; path: string } | { ok: false; reason: string };

const posix = path.posix;

/** The baseline's path in the repository, `/`-separated; or why it cannot be told. */
export function baselinePath(layout: WireSnapshotLayout, snapshot: SnapshotOf, ext = '.png'): BaselinePath {
  const project = layout.projects.find((p) => p.name === snapshot.runnerProject);
  if (!project) return { ok: false, reason: `the run's reporter did not report Playwright project "${snapshot.runnerProject}"` };
  const testFile = posix.relative(posix.join('/', project.test_dir), posix.join('/', snapshot.filePath));
  const parsed = posix.parse(testFile);
  const projectName = sanitizeForFilePath(project.name);
  // Playwright's `_fsSanitizedTestName`: the title path below the file, trimmed to 100 characters.
  const testName = sanitizeForFilePath(trimLongString(snapshot.titles.join(' ')));
  const filled = (project.path_template ?? DEFAULT_TEMPLATE)
    .replace(/\{(.)?testDir\}/g, `$1${project.test_dir}`)
    .replace(/\{(.)?snapshotDir\}/g, `$1${project.snapshot_dir}`)
    .replace(/\{(.)?snapshotSuffix\}/g, layout.platform ? `$1${layout.platform}` : '')
    .replace(/\{(.)?testFileDir\}/g, `$1${parsed.dir}`)
    .replace(/\{(.)?platform\}/g, `$1${layout.platform}`)
    .replace(/\{(.)?projectName\}/g, projectName ? `$1${projectName}` : '')
    .replace(/\{(.)?testName\}/g, `$1${testName}`)
    .replace(/\{(.)?testFileBaseName\}/g, `$1${parsed.name}`)
    .replace(/\{(.)?testFileName\}/g, `$1${parsed.base}`)
    .replace(/\{(.)?testFilePath\}/g, `$1${testFile}`)
    .replace(/\{(.)?arg\}/g, `$1${snapshot.snapshotName}`)
    .replace(/\{(.)?ext\}/g, ext ? `$1${ext}` : '');
  if (posix.isAbsolute(filled) || /^[A-Za-z]:[\\/]/.test(filled)) return { ok: false, reason: `the template names a path outside the repository: ${filled}` };
  const resolved = posix.normalize(posix.join(layout.config_dir, filled));
  if (resolved === '..' || resolved.startsWith('../')) return { ok: false, reason: `the baseline's path ${resolved} is outside the repository` };
  return { ok: true, path: resolved };
}
