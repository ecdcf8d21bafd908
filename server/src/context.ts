import type { BranchLookup } from '@proctor/reporter/toolchain/repository';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Sql } from './db.ts';
import type { BlobStorage } from './storage/blobs.ts';

export type Clock = () => Date;

export const DAY_MS = 86_400_000;

/** The jobs layer as the API sees it: a nudge, never the work itself. */
export interface JobControl {
  /**
   * A cancel stops a run this process executes now (heartbeats would in time); the request's id
   * goes with it, onto the log line of the process that stops it.
   */
  stopRun(runId: number, requestId?: string): Promise<void>;
  /** A sync was requested: look for it now instead of at the next poll. */
  syncRequested(): void;
  /** A run ended: write its rollup now instead of at the next poll. */
  runEnded(): void;
}

/** What every feature may need; tests inject their own clock. */
export interface AppDeps {
  sql: Sql;
  config: Config;
  logger: Logger;
  clock: Clock;
  signingSecret: string;
  storage: BlobStorage;
  jobs?: JobControl;
  branches: BranchLookup;
}
