import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './playwright.ts';
import { freePort } from './process.ts';

const run = promisify(execFile);

// A real npm registry for the release check: Verdaccio on loopback with an empty storage. Packages of
// the @proctor scope live only here (a name on the public registry is never fetched in their place);
// everything else is fetched through it from the registry npm is configured with on this machine.

const REGISTRY_PACKAGE = path.join(ROOT, 'release/registry');
const VERDACCIO = path.join(REGISTRY_PACKAGE, 'node_modules/.bin/verdaccio');

export interface Registry {
  url: string;
  /** An npmrc holding the registry and a publisher's token, for `npm_config_userconfig`. */
  publisherConfig: string;
  /** Writes `.npmrc` naming the registry into a folder: how a user points npm at it. */
  useIn(folder: string): void;
  /** The tarball of a published package as the registry serves it. */
  tarball(name: string): Promise<Buffer>;
  output(): string;
  close(): Promise<void>;
}

async function installVerdaccio(): Promise<void> {
  if (fs.existsSync(VERDACCIO)) return;
  await run('npm', ['ci', '--no-audit', '--no-fund', '--prefix', REGISTRY_PACKAGE], { timeout: 300_000 });
}

function configFor(folder: string, port: number, upstream: string): string {
  return [
    `storage: ${JSON.stringify(path.join(folder, 'storage'))}`,
    'auth:',
    '  htpasswd:',
    `    file: ${JSON.stringify(path.join(folder, 'htpasswd'))}`,
    'uplinks:',
    '  upstream:',
    `    url: ${JSON.stringify(upstream)}`,
    '    timeout: 60s',
    'packages:',
    "  '@proctor/*':",
    '    access: $all',
    '    publish: $authenticated',
    "  '**':",
    '    access: $all',
    '    publish: $authenticated',
    '    proxy: upstream',
    `listen: 127.0.0.1:${port}`,
    'log: { type: stdout, format: pretty, level: warn }',
    '',
  ].join('\n');
}

async function waitForPing(url: string, output: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (
      await fetch(`${url}/-/ping`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`Verdaccio did not answer at ${url}:\n${output()}`);
}

/** A publisher: Verdaccio makes the user at its first login and answers a token for it. */
async function addPublisher(url: string): Promise<string> {
  const response = await fetch(`${url}/-/user/org.couchdb.user:proctor-release`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'proctor-release', password: 'release-check-only', type: 'user', roles: [], date: new Date().toISOString() }),
  });
  const body = (await response.json()) as { token?: string };
  if (!response.ok || !body.token) throw new Error(`Verdaccio refused the publisher: ${response.status} ${JSON.stringify(body)}`);
  return body.token;
}

export async function startRegistry(folder: string): Promise<Registry> {
  await installVerdaccio();
  fs.mkdirSync(folder, { recursive: true });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const upstream = (await run('npm', ['config', 'get', 'registry'])).stdout.trim();
  const configFile = path.join(folder, 'config.yaml');
  fs.writeFileSync(configFile, configFor(folder, port, upstream));
  let printed = '';
  const child = spawn(VERDACCIO, ['--config', configFile], { cwd: folder, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitForPing(url, () => printed);
    const token = await addPublisher(url);
    const publisherConfig = path.join(folder, 'publisher.npmrc');
    fs.writeFileSync(publisherConfig, `registry=${url}/\n//127.0.0.1:${port}/:_authToken=${token}\n`);
    return {
      url,
      publisherConfig,
      useIn: (target) => fs.writeFileSync(path.join(target, '.npmrc'), `registry=${url}/\n`),
      async tarball(name) {
        const manifest = (await (await fetch(`${url}/${name.replace('/', '%2f')}`)).json()) as {
          'dist-tags': { latest: string };
          versions: Record<string, { dist: { tarball: string } }>;
        };
        const latest = manifest.versions[manifest['dist-tags'].latest];
        if (!latest) throw new Error(`${name} has no latest version on the registry`);
        return Buffer.from(await (await fetch(latest.dist.tarball)).arrayBuffer());
      },
      output: () => printed,
      async close() {
        child.kill('SIGTERM');
        await exited;
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}
