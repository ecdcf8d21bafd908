/** The exit codes of proctor-ci's commands, as CI scripts branch on them. */
export const EXIT = { passed: 0, failed: 1, error: 2, unreachable: 3 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A flag or setting that is wrong: said with the command's usage, exit code 2. */
export class UsageError extends Error {}
