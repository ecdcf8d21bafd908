// The one check of Playwright arguments that units get (an agent's `-- <arguments>`, an
// environment's playwright_args), and the arguments a unit gets of them (without --project).
import { describe, expect, it } from 'vitest';
import { playwrightArgsProblem, withoutProjects } from '../../reporter/src/toolchain/playwright-args.ts';

describe('Playwright arguments', () => {
  it('when the arguments are options that leave a unit what it is, then they pass, values given apart or with =', () => {
    for (const args of [
      [],
      ['--config', 'ci.config.ts', '--project', 'chromium', '--workers', '2', '--grep', '@smoke', '--retries=2', '--timeout=5000'],
      ['-c', 'x.ts', '-j', '1', '-g', 'login', '--grep-invert', 'slow', '--headed', '--max-failures=3', '--trace', 'on', '-u', '--fully-parallel'],
      ['--some-future-option=value', '--forbid-only'],
    ])
      expect(playwrightArgsProblem(args), JSON.stringify(args)).toBeNull();
  });

  it.each([
    [['tests/login.spec.ts'], '"tests/login.spec.ts" is refused: it would select test files'],
    [['--workers', '2', 'login'], '"login" is refused: it would select test files'],
    [['--project', 'a', 'b'], '"b" is refused: it would select test files'],
    [['--shard', '1/3'], '"--shard" is refused'],
    [['--test-list=x.txt'], '"--test-list" is refused'],
    [['--test-list-invert', 'x.txt'], '"--test-list-invert" is refused'],
    [['--list'], '"--list" is refused'],
    [['--last-failed'], '"--last-failed" is refused'],
    [['--only-changed'], '"--only-changed" is refused'],
    [['--ui-port=8080'], '"--ui-port" is refused'],
    [['--debug'], '"--debug" is refused'],
    [['--reporter', 'dot'], '"--reporter" is refused'],
    [['--output=out'], '"--output" is refused'],
    [['--repeat-each=3'], '"--repeat-each" is refused'],
    [['--grep'], '"--grep" needs a value'],
    [['--'], '"--" is refused'],
  ])('when the arguments are %j, then they are refused naming the argument', (args, reason) => {
    expect(playwrightArgsProblem(args)).toContain(reason);
  });

  it('when a unit gets the arguments, then every --project is left out, the rest kept in order', () => {
    expect(withoutProjects(['--project', 'a', '--grep', '@x', '--project=b', '-j', '2', '--headed'])).toEqual(['--grep', '@x', '-j', '2', '--headed']);
  });
});
