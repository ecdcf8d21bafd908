// What every `proctor` command shares, and nothing heavier: the dispatcher loads it before it knows
// which command runs, so that each command loads only what it uses.
import os from 'node:os';
import type { Actor } from '../audit/store.ts';

/** A command line that cannot be run as given: said in one line, with the usage. */
export class UsageError extends Error {}

export type Flags = Record<string, string | boolean | undefined>;

export function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function projectIdFlag(flags: Flags): number {
  const id = Number(required(flags, 'project'));
  if (!Number.isInteger(id) || id < 1) throw new UsageError('--project must be a project id (a positive integer)');
  return id;
}

/** The operating system's user who runs the command: the CLI's actor in the audit trail. */
export function osUserName(): string {
  try {
    return os.userInfo().username;
  } catch {
    // A container's user without a passwd entry: its uid is all there is.
    return process.env.USER || process.env.LOGNAME || `uid ${process.getuid?.() ?? 'unknown'}`;
  }
}

/** Who a command acts as in the audit trail: the operating system's user at the command line. */
export function commandLineActor(): Actor {
  return { kind: 'cli', user: osUserName() };
}
