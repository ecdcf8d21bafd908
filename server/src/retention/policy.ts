import type { Config } from '../config.ts';
import type { RetentionPolicy } from './schema.ts';

/** The policy of a project that has not set its own. */
export function serverPolicy(config: Pick<Config, 'retention'>): RetentionPolicy {
  return { results_days: config.retention.resultsDays, artifacts_days: config.retention.artifactsDays };
}
