import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The dashboard's script and stylesheet: bundled at build time from client/ by
 * server/scripts/build-dashboard.mjs into dist/dashboard-assets/ (shipped in the package), named by
 * their content's hash, so that a browser keeps them for good and a changed file is a new name.
 */
export const ASSETS_DIR = fileURLToPath(new URL('../../dist/dashboard-assets/', import.meta.url));

/** How a hashed asset is cached: a year, never asked again (its name changes with its content). */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

export interface DashboardAssets {
  /** The paths pages link: `/assets/dashboard-<hash>.js` and `/assets/dashboard-style-<hash>.css`. */
  script: string;
  style: string;
  /** Each served file by its name: its bytes and content type. */
  files: Map<string, { body: Buffer; type: string }>;
}

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

let loaded: DashboardAssets | null = null;

/** The built assets, read once; a server built without them says how to build them. */
export function dashboardAssets(dir = ASSETS_DIR): DashboardAssets {
  if (loaded && dir === ASSETS_DIR) return loaded;
  let manifest: Record<string, string>;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Record<string, string>;
  } catch {
    throw new Error(`the dashboard's assets are not built in ${dir}: run \`npm run build -w @proctor/server\``);
  }
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const name of Object.values(manifest)) {
    files.set(name, { body: fs.readFileSync(path.join(dir, name)), type: TYPES[path.extname(name)] ?? 'application/octet-stream' });
  }
  const script = manifest['dashboard.js'];
  const style = manifest['dashboard.css'];
  if (!script || !style) throw new Error(`${path.join(dir, 'manifest.json')} names no dashboard.js or dashboard.css`);
  const assets = { script: `/assets/${script}`, style: `/assets/${style}`, files };
  if (dir === ASSETS_DIR) loaded = assets;
  return assets;
}
