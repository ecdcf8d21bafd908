// What the runs, the jobs and the pages use of the trackers: a run's end queued to be followed, the
// jobs that follow it and send the actions, the routes, and a test's link for its page.
export { deliverTrackerActionNext, type TrackerDeps } from './deliver.ts';
export { followNextRun } from './follow.ts';
export { pagesOf } from './compose.ts';
export { queueFollow } from './outbox-store.ts';
export { trackerRoutes } from './routes.ts';
export { issueOfTest, type LinkRow } from './store.ts';
export type { IssueTracker, IssueRef, IssueRead } from './tracker.ts';
export { getSettings as getTrackerSettings, presentSettings as presentTrackerSettings } from './store.ts';
export type { TrackerSettings } from './schema.ts';
