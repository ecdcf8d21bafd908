// What the entry points and the jobs use of retention: its routes, and the pass that deletes what the policy expired.
export { retentionPolicyOf, serverPolicy } from './policy.ts';
export { DEFAULT_PACE, describeReport, type PassOptions, type ProjectReport, type RetentionDeps, runRetentionPass } from './pass.ts';
export { retentionRoutes } from './routes.ts';
