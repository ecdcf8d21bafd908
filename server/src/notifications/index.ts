// What the runs and the jobs use of notifications: the outbox a run's end writes to, and the step that sends it.
export { deliverNext, type NotifyDeps } from './deliver.ts';
export { enqueueNotifications } from './outbox.ts';
export { notificationRoutes } from './routes.ts';
export { listDestinations, presentDestination } from './store.ts';
