import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Sql } from './db.ts';
import type { BlobStorage } from './resources/storage.ts';

export type Clock = () => Date;

/** The executor as the API sees it: cancel stops a run this process executes. */
export interface RunControl {
  stopRun(runId: number): Promise<void>;
}

/** What every feature may need; tests inject their own clock. */
export interface AppDeps {
  sql: Sql;
  config: Config;
  logger: Logger;
  clock: Clock;
  signingSecret: string;
  storage: BlobStorage;
  runControl?: RunControl;
}
