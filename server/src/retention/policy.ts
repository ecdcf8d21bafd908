import type { Config } from '../config.ts';
import type { Tx } from '../db.ts';
import type { RetentionPolicy } from './schema.ts';
import { getPolicy } from './store.ts';

/** The policy of a project that has not set its own. */
export function serverPolicy(config: Pick<Config, 'retention'>): RetentionPolicy {
  return { results_days: config.retention.resultsDays, artifacts_days: config.retention.artifactsDays };
}

/** The project's policy as it applies: its own, or the server's. */
export function retentionPolicyOf(sql: Tx, config: Pick<Config, 'retention'>, projectId: number): Promise<RetentionPolicy> {
  return getPolicy(sql, projectId, serverPolicy(config));
}
