import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './playwright.ts';

const ACTION = path.join(ROOT, 'action/dist/index.js');

/** The defaults action.yml gives its inputs: a runner passes them as INPUT_* too. */
function actionDefaults(): Record<string, string> {
  const yaml = fs.readFileSync(path.join(ROOT, 'action/action.yml'), 'utf8');
  const inputs = yaml.slice(yaml.indexOf('\ninputs:'), yaml.indexOf('\noutputs:'));
  const defaults: Record<string, string> = {};
  for (const match of inputs.matchAll(/^ {2}([\w-]+):\n((?: {4}.*\n)+)/gm)) {
    const value = /^ {4}default: '(.*)'$/m.exec(match[2] as string)?.[1];
    if (value !== undefined) defaults[match[1] as string] = value;
  }
  return defaults;
}

/** GitHub's file commands: `name<<delimiter`, value lines, `delimiter`. */
export function readFileCommands(file: string): Record<string, string> {
  const values: Record<string, string> = {};
  const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n') : [];
  for (let i = 0; i < lines.length; i++) {
    const match = /^([^<]+)<<(.+)$/.exec(lines[i] as string);
    if (!match) continue;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== match[2]; i++) body.push(lines[i] as string);
    values[match[1] as string] = body.join('\n');
  }
  return values;
}

export interface ActionStep {
  child: ChildProcessWithoutNullStreams;
  exited: Promise<number | null>;
  output(): string;
  outputs(): Record<string, string>;
  state(): Record<string, string>;
  summary(): string;
}

/**
 * Runs the built action as a GitHub runner runs a step: inputs as INPUT_* (defaults included),
 * GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and GITHUB_STATE files, the standard context variables, and
 * for a post step the saved state as STATE_*.
 */
export function runActionStep(inputs: Record<string, string>, options: { state?: Record<string, string>; env?: Record<string, string> } = {}): ActionStep {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-action-'));
  const files = { output: path.join(dir, 'output'), summary: path.join(dir, 'summary'), state: path.join(dir, 'state') };
  for (const file of Object.values(files)) fs.writeFileSync(file, '');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GITHUB_ACTIONS: 'true',
    CI: 'true',
    GITHUB_OUTPUT: files.output,
    GITHUB_STEP_SUMMARY: files.summary,
    GITHUB_STATE: files.state,
    GITHUB_ACTOR: 'octocat',
    GITHUB_SHA: '1234567890abcdef1234567890abcdef12345678',
    GITHUB_REPOSITORY: 'acme/shop',
    GITHUB_REPOSITORY_OWNER: 'acme',
    GITHUB_RUN_ID: '987654',
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_API_URL: 'https://api.github.com',
    GITHUB_WORKFLOW: 'deploy',
    GITHUB_EVENT_NAME: 'push',
    GITHUB_REF: 'refs/heads/main',
    GITHUB_JOB: 'e2e',
    RUNNER_TEMP: dir,
    ...options.env,
  };
  for (const [name, value] of Object.entries({ ...actionDefaults(), ...inputs })) env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] = value;
  for (const [name, value] of Object.entries(options.state ?? {})) env[`STATE_${name}`] = value;
  const child = spawn(process.execPath, [ACTION], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    exited,
    output: () => output,
    outputs: () => readFileCommands(files.output),
    state: () => readFileCommands(files.state),
    summary: () => fs.readFileSync(files.summary, 'utf8'),
  };
}

/** A TCP proxy the test can take down and bring back on the same port. */
export async function toggleableProxy(targetPort: number) {
  const sockets = new Set<net.Socket>();
  const make = () =>
    net.createServer((client) => {
      const upstream = net.connect(targetPort, '127.0.0.1');
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
    });
  let server = make();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    down: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    up: async () => {
      server = make();
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
