// What the HTTP layer and the dashboard may use of comparisons: two runs side by side.
export { compareRuns } from './compare.ts';
export { comparisonRoutes } from './routes.ts';
export type { ComparedTest, Comparison } from './schema.ts';
export { type BrokeWhen, brokeWhen, type GroupSeen, groupsOverTime, type RunPoint } from './broke.ts';
export { testTimeline } from './store.ts';
