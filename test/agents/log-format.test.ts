// `proctor-ci agent`'s log: text a person reads on a terminal, JSON lines where logs are collected.
// The processes run the built bin; a terminal is a pseudo-terminal from util-linux's `script`.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLog, logFormatFor, textLog } from '../../reporter/src/agent/log.ts';
import { ROOT } from '../helpers/playwright.ts';
import { seedProjectWithEnvironment, startTestServer, type TestServer } from '../helpers/server.ts';

const run = promisify(execFile);
const BIN = path.join(ROOT, 'reporter/dist/cli/main.js');

function written(write: (out: PassThrough) => void): string {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString()));
  write(out);
  return text;
}

describe("the agent's log lines", () => {
  it('when a line is written as text, then it holds the time, the level, the message and the fields, quoted where they have spaces', () => {
    const at = new Date(2026, 10, 28, 9, 5, 7);
    const text = written((out) => {
      const log = textLog('info', out, () => at);
      log.info({ test_run_id: 12, agent_id: 3 }, 'joined the run');
      log.warn({ err: new Error('connection refused'), dir: '/tmp/a b' }, 'heartbeat failed');
    });
    expect(text).toBe(
      '09:05:07 INFO joined the run test_run_id=12 agent_id=3\n09:05:07 WARN heartbeat failed err="Error: connection refused" dir="/tmp/a b"\n',
    );
  });

  it('when a line is below the level, then nothing is written, in either format', () => {
    expect(written((out) => textLog('warn', out).info({}, 'hidden'))).toBe('');
    expect(written((out) => jsonLog('warn', out).info({}, 'hidden'))).toBe('');
  });

  it('when no format is given, then a terminal gets text and anything else JSON; a given format wins', () => {
    expect(logFormatFor(undefined, true)).toBe('text');
    expect(logFormatFor(undefined, false)).toBe('json');
    expect(logFormatFor('json', true)).toBe('json');
    expect(logFormatFor('text', false)).toBe('text');
  });
});

describe('`proctor-ci agent` as a process', () => {
  let server: TestServer;
  let key: string;
  let runKeys = 0;

  beforeAll(async () => {
    server = await startTestServer();
    // The project's repository does not exist: the agent joins its run, logs it, and fails to check it out.
    key = (await seedProjectWithEnvironment(server.sql, 'local')).key;
  }, 60_000);
  afterAll(async () => server?.close());

  const agentArgs = (...extra: string[]) => [BIN, 'agent', '--url', server.url, '--environment', 'local', '--run-key', `log-${++runKeys}`, ...extra];
  const env = () => ({ ...process.env, PROCTOR_API_KEY: key, LOG_LEVEL: 'info', CI: '', GITHUB_RUN_ID: '' });
  /** The agent's stderr on a pseudo-terminal: `script` runs it there and copies what it wrote to stdout. */
  async function onTerminal(...extra: string[]): Promise<string> {
    const command = [process.execPath, ...agentArgs(...extra)].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
    const { stdout } = await run('script', ['-qec', `${command} </dev/null`, '/dev/null'], { env: env(), timeout: 60_000 }).catch(
      (error: { stdout: string }) => error,
    );
    return stdout.replace(/\r/g, '');
  }
  async function throughPipe(...extra: string[]): Promise<string> {
    const { stderr } = await run(process.execPath, agentArgs(...extra), { env: env(), timeout: 60_000 }).catch((error: { stderr: string }) => error);
    return stderr;
  }
  const joinedLine = (output: string) => output.split('\n').find((line) => line.includes('joined the run')) ?? '';

  it('when stderr is a terminal, then the lines are text: time, level, message and fields', async () => {
    const line = joinedLine(await onTerminal());
    expect(line).toMatch(/^\d\d:\d\d:\d\d INFO joined the run test_run_id=\d+ agent_id=\d+$/);
  });

  it('when stderr is a pipe, then the lines are JSON', async () => {
    const line = JSON.parse(joinedLine(await throughPipe())) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 30, service: 'proctor-agent', msg: 'joined the run' });
    expect(typeof line.test_run_id).toBe('number');
  });

  it('when --log-format is given, then it wins over what stderr is', async () => {
    expect(JSON.parse(joinedLine(await onTerminal('--log-format', 'json')))).toMatchObject({ msg: 'joined the run' });
    expect(joinedLine(await throughPipe('--log-format', 'text'))).toMatch(/^\d\d:\d\d:\d\d INFO joined the run /);
  });

  it('when --log-format names another format, then the command line is refused, naming the flag', async () => {
    const refused = await run(process.execPath, agentArgs('--log-format', 'yaml'), { env: env() }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    const { code, stderr } = refused;
    expect(code).toBe(2);
    expect(stderr).toContain('--log-format must be text or json');
  });
});
