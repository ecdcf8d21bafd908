// What other features and the jobs may use of visual changes.
export { compareNext, type CompareDeps, runVisualChanges, visualCounts } from './service.ts';
export { visualRoutes } from './routes.ts';
export type { BaselineCommit, VisualChange, VisualChanges } from './schema.ts';
export { recordSnapshotLayout } from './layout-store.ts';
export { type CommitDeps, commitBaselinesNext, proveNext, runBaselines, presentCommit, type TriggerRerun } from './baselines.ts';
export { runCommits } from './commit-store.ts';
