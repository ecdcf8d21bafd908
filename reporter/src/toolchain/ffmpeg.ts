import fs from 'node:fs';
import path from 'node:path';

/**
 * Playwright records video with an ffmpeg build of its own, which `npx playwright install ffmpeg`
 * downloads. Where it cannot be downloaded, the system's ffmpeg (Debian's records the same VP8
 * webm) serves when it is linked where Playwright looks: `<registry>/ffmpeg-<revision>/ffmpeg-linux`,
 * the registry being PLAYWRIGHT_BROWSERS_PATH or the home's `.cache/ms-playwright`.
 */

const SYSTEM_FFMPEG = ['/usr/bin/ffmpeg', '/usr/local/bin/ffmpeg'];

/** The system's ffmpeg, from PATH or the usual places; null when there is none. */
export function systemFfmpeg(env: NodeJS.ProcessEnv = process.env): string | null {
  const onPath = (env.PATH ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .map((dir) => path.join(dir, 'ffmpeg'));
  return [...onPath, ...SYSTEM_FFMPEG].find(isExecutable) ?? null;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The registry folder a Playwright started with `env` looks in; null when it looks inside its own package. */
export function playwrightRegistry(env: NodeJS.ProcessEnv): string | null {
  if (env.PLAYWRIGHT_BROWSERS_PATH === '0') return null;
  if (env.PLAYWRIGHT_BROWSERS_PATH) return path.resolve(env.PLAYWRIGHT_BROWSERS_PATH);
  return env.HOME ? path.join(env.HOME, '.cache', 'ms-playwright') : null;
}

/** The ffmpeg revision the Playwright of this `playwright-core` folder looks for. */
export function ffmpegRevision(playwrightCoreDir: string): string {
  const browsers = JSON.parse(fs.readFileSync(path.join(playwrightCoreDir, 'browsers.json'), 'utf8')) as { browsers: { name: string; revision: string }[] };
  const ffmpeg = browsers.browsers.find((browser) => browser.name === 'ffmpeg');
  if (!ffmpeg) throw new Error(`no ffmpeg in ${playwrightCoreDir}/browsers.json`);
  return ffmpeg.revision;
}

export type VideoEncoder = { kind: 'playwright' | 'linked'; path: string } | { kind: 'none'; reason: string };

/**
 * Makes sure the Playwright of `playwrightCoreDir` finds an ffmpeg in `registry`: its own build when
 * it is there, else a link to the system's. `owner` is given the folders made, so that a runner
 * user whose home holds the registry keeps it its own.
 */
export function provideFfmpeg(
  registry: string,
  playwrightCoreDir: string,
  options: { ffmpeg?: string | null; owner?: { uid: number; gid: number } | null } = {},
): VideoEncoder {
  const folder = path.join(registry, `ffmpeg-${ffmpegRevision(playwrightCoreDir)}`);
  const target = path.join(folder, 'ffmpeg-linux');
  if (isExecutable(target)) return { kind: fs.lstatSync(target).isSymbolicLink() ? 'linked' : 'playwright', path: target };
  const ffmpeg = options.ffmpeg === undefined ? systemFfmpeg() : options.ffmpeg;
  if (!ffmpeg) return { kind: 'none', reason: 'no ffmpeg on this machine (apt-get install ffmpeg): videos are not recorded' };
  try {
    const made = fs.mkdirSync(folder, { recursive: true });
    fs.rmSync(target, { force: true });
    fs.symlinkSync(ffmpeg, target);
    if (options.owner && made) chownDown(made, folder, options.owner);
    return { kind: 'linked', path: target };
  } catch (error) {
    return { kind: 'none', reason: `could not link ${ffmpeg} at ${target}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
}

/** Gives `owner` every folder from `top` (the first one made) down to `bottom`. */
function chownDown(top: string, bottom: string, owner: { uid: number; gid: number }): void {
  for (let dir = bottom; ; dir = path.dirname(dir)) {
    fs.chownSync(dir, owner.uid, owner.gid);
    if (dir === top || dir === path.dirname(dir)) return;
  }
}
