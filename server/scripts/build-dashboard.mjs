// The dashboard's browser code and styles, bundled by esbuild into dist/dashboard-assets/ under
// content-hashed names, with manifest.json naming them: the server serves them cached for good,
// and a changed file gets a new name. Run by the package's build (and prepack) and by the tests'
// global setup; `buildDashboardAssets` is also called by the test that a change renames a file.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const SERVER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CLIENT_DIR = path.join(SERVER, 'src/dashboard/client');
export const ASSETS_DIR = path.join(SERVER, 'dist/dashboard-assets');

/**
 * Bundles `client/main.ts` and `client/styles/dashboard.css` from `clientDir` into `outDir`,
 * emptied first. Answers the manifest: each entry's logical name to its hashed file name.
 * @param {{ clientDir?: string, outDir?: string }} [options]
 * @returns {Promise<Record<string, string>>}
 */
export async function buildDashboardAssets(options = {}) {
  const clientDir = options.clientDir ?? CLIENT_DIR;
  const outDir = options.outDir ?? ASSETS_DIR;
  fs.rmSync(outDir, { recursive: true, force: true });
  const result = await build({
    entryPoints: { dashboard: path.join(clientDir, 'main.ts'), 'dashboard-style': path.join(clientDir, 'styles/dashboard.css') },
    // The names hash what is built, and esbuild counts the paths it reads from too: from one folder always.
    absWorkingDir: SERVER,
    outdir: outDir,
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
    metafile: true,
    logLevel: 'warning',
    legalComments: 'none',
  });
  /** @type {Record<string, string>} */
  const manifest = {};
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    if (!output.entryPoint) continue;
    const name = path.basename(file);
    manifest[name.endsWith('.css') ? 'dashboard.css' : 'dashboard.js'] = name;
  }
  fs.writeFileSync(path.join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const manifest = await buildDashboardAssets();
  console.log(`dashboard assets: ${Object.values(manifest).join(', ')}`);
}
