import { TransientError } from '../runs/client.ts';
import { ApiError } from '../api/transport.ts';

/** The exit codes of proctor-ci's commands, as CI scripts branch on them. */
export const EXIT = { passed: 0, failed: 1, error: 2, unreachable: 3 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A flag or setting that is wrong: said with the command's usage, exit code 2. */
export class UsageError extends Error {}

/**
 * Every command's opening: `--help` prints its usage (exit 0); settings that cannot be read are
 * said (by `say`, in the command's voice) with the usage after them (exit 2). Otherwise the settings.
 */
export function openCommand<Settings>(
  args: string[],
  usage: string,
  parse: () => Settings,
  say: (message: string) => void,
): { settings: Settings } | { exit: ExitCode } {
  if (args.includes('--help')) {
    process.stdout.write(`${usage}\n`);
    return { exit: EXIT.passed };
  }
  try {
    return { settings: parse() };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    say(error.message);
    process.stderr.write(`${usage}\n`);
    return { exit: EXIT.error };
  }
}

/** A request that failed for good: 3 when no connection was ever made to the server, else 2. */
export function exitCodeOf(error: unknown): ExitCode {
  const unreachable = (error instanceof TransientError && error.unreachable) || (error instanceof ApiError && error.status === null);
  return unreachable ? EXIT.unreachable : EXIT.error;
}
