import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Sql } from './db.ts';
import type { BlobStorage } from './resources/storage.ts';

export type Clock = () => Date;

/** What every feature may need; tests inject their own clock. */
export interface AppDeps {
  sql: Sql;
  config: Config;
  logger: Logger;
  clock: Clock;
  signingSecret: string;
  storage: BlobStorage;
}
