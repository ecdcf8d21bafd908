// Playwright arguments a run's shards and units get from the environment's settings or from
// `proctor-ci agent … -- <arguments>`: `--config`, `--project`, `--workers`, `--grep`, `--retries`,
// `--timeout` and the rest. Those that would change what a unit is (which tests it runs, how they
// are reported, or running no tests at all) are refused, each with a reason naming it.

/** Options that take a value (`--name value` or `--name=value`), short forms with them. */
const WITH_VALUE = new Set([
  '-c',
  '--config',
  '-g',
  '--grep',
  '--grep-invert',
  '--global-timeout',
  '--max-failures',
  '--project',
  '--retries',
  '--timeout',
  '--trace',
  '--tsconfig',
  '-j',
  '--workers',
  '--browser',
  '--update-source-method',
  // Refused below, named here so that their values are not taken for file filters.
  '--shard',
  '--test-list',
  '--test-list-invert',
  '--reporter',
  '--output',
  '--repeat-each',
  '--ui-host',
  '--ui-port',
]);

/** Options whose value is optional: only `--name=value` gives them one. */
const OPTIONAL_VALUE = new Set(['--only-changed', '-u', '--update-snapshots']);

const REFUSED: Record<string, string> = {
  '--shard': 'Proctor spreads the run over its shards or agents itself',
  '--test-list': "Proctor names each shard's or unit's tests itself",
  '--test-list-invert': "Proctor names each shard's or unit's tests itself",
  '--list': 'it lists the tests instead of running them',
  '--last-failed': "it selects the tests of this machine's last run; rerun a run's failed tests through Proctor instead",
  '--only-changed': "it selects tests by changed files; select tests with the run's tags or test ids instead",
  '--ui': 'it opens the interactive UI, which no agent or server can show',
  '--ui-host': 'it opens the interactive UI, which no agent or server can show',
  '--ui-port': 'it opens the interactive UI, which no agent or server can show',
  '--debug': 'it runs headed under the inspector, one worker, waiting for a person',
  '--reporter': "Proctor's reporter must report every test: add other reporters in the config",
  '--output': 'Proctor gives each shard or unit an output folder of its own',
  '--repeat-each': "it repeats every test of the unit; repeats of new tests are the environment's burn_in_repeats",
  '-h': 'it prints the help instead of running tests',
  '--help': 'it prints the help instead of running tests',
};

/** At most this many arguments, each at most this long: a command line, not a file. */
export const PLAYWRIGHT_ARGS_LIMITS = { count: 100, length: 1000 };

/** Why the arguments cannot be given to every unit, naming the first one refused; null when they can. */
export function playwrightArgsProblem(args: readonly string[]): string | null {
  if (args.length > PLAYWRIGHT_ARGS_LIMITS.count) return `at most ${PLAYWRIGHT_ARGS_LIMITS.count} Playwright arguments`;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg.length === 0 || arg.length > PLAYWRIGHT_ARGS_LIMITS.length)
      return `Playwright argument ${i + 1} must be 1 to ${PLAYWRIGHT_ARGS_LIMITS.length} characters`;
    if (!arg.startsWith('-') || arg === '-' || arg === '--')
      return `"${arg}" is refused: it would select test files, and Proctor selects each shard's or unit's tests itself (give an option's value with "=", such as --name=value)`;
    const name = arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
    const refusal = REFUSED[name];
    if (refusal) return `"${name}" is refused: ${refusal}`;
    if (arg.includes('=') || OPTIONAL_VALUE.has(name)) continue;
    if (WITH_VALUE.has(name)) {
      if (i + 1 >= args.length) return `"${name}" needs a value`;
      i++;
    }
  }
  return null;
}

/** The arguments without their `--project` options: a unit names its own runner project. */
export function withoutProjects(args: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--project') {
      i++;
      continue;
    }
    if (arg.startsWith('--project=')) continue;
    kept.push(arg);
    if (!arg.includes('=') && WITH_VALUE.has(arg)) {
      const value = args[i + 1];
      if (value !== undefined) kept.push(value);
      i++;
    }
  }
  return kept;
}
