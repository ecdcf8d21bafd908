// What the runs and the jobs use of notifications: the outbox a run's end writes to, and the step that sends it.
export { deliverNext, type NotifyDeps } from './deliver.ts';
export { queueDueDigests } from './digests.ts';
export { enqueueNotifications } from './outbox.ts';
export { notificationRuleRoutes } from './rules-routes.ts';
export type { OwnerRoute, Subscription } from './rules-schema.ts';
export { listOwnerRoutes, listSubscriptions, presentSubscription } from './rules-store.ts';
export { notificationRoutes } from './routes.ts';
export { listDestinations, presentDestination } from './store.ts';
export { deliverVisualStatusNext, VISUAL_CONTEXT } from './visual-status.ts';
export { queueVisualStatus } from './visual-status-store.ts';
export { commitToGitHub, commitToGitLab, type Committed, type FilesToCommit, forgeDestinations } from './baseline-commit.ts';
// What the trackers use: the destinations' clients and credentials, and the outbox's waits.
export { retryDelayMs } from './deliver.ts';
export { refusedAtDelivery } from './credentials.ts';
export { githubClient, type Call as GitHubCall } from './github.ts';
export { gitlabClient, type GitLabClient, projectOf as gitlabProjectOf, statusOf as gitlabStatusOf } from './gitlab.ts';
export { destinationColumns, getDestination, type StoredDestination } from './store.ts';
