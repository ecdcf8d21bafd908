import { describe, expect, it } from 'vitest';
import { FatalError, type RunView, TransientError } from '../../reporter/src/runs/client.ts';
import { parseSettings, SettingsError } from '../../action/src/settings.ts';
import { waitForRun } from '../../reporter/src/runs/wait.ts';

function view(state: string, done = 0): RunView {
  return {
    testRun: {
      id: 1,
      state,
      total_count: done,
      success_count: done,
      failed_count: 0,
      flaky_count: 0,
      skipped_count: 0,
      duration: null,
      summary_url: 'u',
      environment_name: 'e',
      error_reason: null,
    },
    flattenedSummaryDetails: [],
  };
}

/** A clock that moves only when the wait loop sleeps: the loop runs instantly. */
function fakeTime() {
  let now = 0;
  const sleeps: number[] = [];
  return { now: () => now, sleep: async (ms: number) => void (sleeps.push(ms), (now += ms)), sleeps };
}

describe('the wait loop', () => {
  it('when the run progresses and ends, then it logs each change once and returns the run', async () => {
    const time = fakeTime();
    const answers = [view('queued'), view('running', 1), view('running', 1), view('running', 3), view('passed', 4)];
    const logs: string[] = [];
    const result = await waitForRun(
      { read: async () => answers.shift() as RunView, ...time, log: (l) => logs.push(l), warn: () => undefined },
      { timeoutMs: 60_000, pollMs: 5000, maxBackoffMs: 60_000 },
    );
    expect(result.kind).toBe('ended');
    expect(logs).toEqual([
      'queued: 0 tests done (0 passed, 0 failed, 0 flaky, 0 skipped)',
      'running: 1 tests done (1 passed, 0 failed, 0 flaky, 0 skipped)',
      'running: 3 tests done (3 passed, 0 failed, 0 flaky, 0 skipped)',
      'passed: 4 tests done (4 passed, 0 failed, 0 flaky, 0 skipped)',
    ]);
    expect(time.sleeps).toEqual([5000, 5000, 5000, 5000]);
  });

  it('when reads fail transiently, then it backs off, warns, and carries on', async () => {
    const time = fakeTime();
    let reads = 0;
    const warnings: string[] = [];
    const result = await waitForRun(
      {
        read: async () => {
          reads++;
          if (reads >= 2 && reads <= 5) throw new TransientError('HTTP 503: unavailable', false);
          return view(reads > 6 ? 'passed' : 'running');
        },
        ...time,
        log: () => undefined,
        warn: (w) => warnings.push(w),
      },
      { timeoutMs: 600_000, pollMs: 1000, maxBackoffMs: 4000 },
    );
    expect(result.kind).toBe('ended');
    expect(time.sleeps).toEqual([1000, 1000, 2000, 4000, 4000, 1000]);
    expect(warnings).toHaveLength(1);
  });

  it('when a read fails for good (401, 404), then it throws at once', async () => {
    const time = fakeTime();
    await expect(
      waitForRun(
        { read: async () => Promise.reject(new FatalError('HTTP 401: refused', 401)), ...time, log: () => undefined, warn: () => undefined },
        { timeoutMs: 60_000, pollMs: 1000, maxBackoffMs: 1000 },
      ),
    ).rejects.toThrow('HTTP 401');
    expect(time.sleeps).toEqual([]);
  });

  it('when the run does not end in time, then it returns a timeout with the last state, having read at the poll rate', async () => {
    const time = fakeTime();
    let reads = 0;
    const result = await waitForRun(
      { read: async () => (reads++, view('running', reads)), ...time, log: () => undefined, warn: () => undefined },
      { timeoutMs: 60_000, pollMs: 10_000, maxBackoffMs: 60_000 },
    );
    expect(result).toMatchObject({ kind: 'timeout', last: { testRun: { state: 'running' } } });
    expect(reads).toBe(7);
    expect(time.now()).toBeLessThanOrEqual(60_000);
  });
});

describe('the inputs', () => {
  const base: Record<string, string> = { url: 'https://proctor.example.com/', 'api-key': 'k', environment: 'prod' };
  const read = (extra: Record<string, string>) => (name: string) => ({ ...base, ...extra })[name] ?? '';

  it('when only the required inputs are given, then the defaults of action.yml apply', () => {
    expect(parseSettings(read({}), 'abc')).toMatchObject({
      url: 'https://proctor.example.com',
      environment: 'prod',
      build: null,
      wait: true,
      timeoutMs: 3_600_000,
      pollMs: 10_000,
      failOnFlaky: false,
      sendNotifications: true,
      mode: 'trigger',
      agent: { command: ['npx', '--yes', '@proctor/reporter@0.1.0'], name: null, workspace: process.cwd() },
    });
  });

  it('when mode is agent, then the agent command is split into its words and the workspace is the one given', () => {
    const settings = parseSettings(read({ mode: 'agent', 'agent-command': '  npx  proctor ', 'agent-name': 'shard-2' }), null, '/home/runner/work/shop');
    expect(settings).toMatchObject({ mode: 'agent', agent: { command: ['npx', 'proctor'], name: 'shard-2', workspace: '/home/runner/work/shop' } });
  });

  it('when a build is given without a commit, then the workflow commit is its commit', () => {
    expect(parseSettings(read({ 'build-url': 'https://preview.example.com' }), 'abc').build).toEqual({ url: 'https://preview.example.com', commit: 'abc' });
    expect(parseSettings(read({ 'build-url': 'u', 'build-commit': 'def' }), 'abc').build).toEqual({ url: 'u', commit: 'def' });
  });

  it('when max-failures is given, then the run is asked to stop after that many failures; else the environment decides', () => {
    expect(parseSettings(read({ 'max-failures': '3' }), null).maxFailures).toBe(3);
    expect(parseSettings(read({}), null).maxFailures).toBeNull();
  });

  it('when affected is true, then the run is asked for the affected tests only; else every test runs', () => {
    expect(parseSettings(read({ affected: 'true' }), null).affected).toBe(true);
    expect(parseSettings(read({}), null).affected).toBe(false);
  });

  it('when lists, overrides and metadata are given, then they are parsed', () => {
    const settings = parseSettings(
      read({ tags: 'smoke, cart', 'test-case-ids': 'a\nb', 'env-overrides': 'A=1\nB=x=y\n', metadata: '{"n":1,"s":"x"}', 'total-shards': '3' }),
      null,
    );
    expect(settings).toMatchObject({
      tags: ['smoke', 'cart'],
      testCaseIds: ['a', 'b'],
      envOverrides: [
        { name: 'A', value: '1' },
        { name: 'B', value: 'x=y' },
      ],
      metadata: { n: 1, s: 'x' },
      totalShards: 3,
    });
  });

  it.each([
    [{ url: '' }, 'input url is required'],
    [{ 'api-key': '' }, 'input api-key is required'],
    [{ environment: '' }, 'input environment is required'],
    [{ url: 'proctor.example.com' }, 'input url must start with'],
    [{ branch: 'main', 'build-url': 'u' }, 'cannot be combined'],
    [{ wait: 'maybe' }, 'input wait must be true or false'],
    [{ 'total-shards': '0' }, 'input total-shards'],
    [{ metadata: '[1]' }, 'input metadata must be a JSON object'],
    [{ metadata: '{"a":{"b":1}}' }, '"a" must be a string or a number'],
    [{ 'env-overrides': 'not a pair' }, 'input env-overrides'],
    [{ mode: 'agents' }, 'input mode must be trigger or agent'],
    [{ 'max-failures': '0' }, 'input max-failures'],
    [{ 'max-failures': '2.5' }, 'input max-failures must be a whole number'],
    [{ affected: 'maybe' }, 'input affected must be true or false'],
    [{ affected: 'true', mode: 'agent' }, 'input affected is for mode trigger'],
  ])('when the inputs are %j, then it says %s', (extra, message) => {
    expect(() => parseSettings(read(extra), null)).toThrow(SettingsError);
    expect(() => parseSettings(read(extra), null)).toThrow(message);
  });
});
