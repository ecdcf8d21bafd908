// What other features may use of snoozes: which of a run's failures a snooze covers.
export { snoozedTestIdsOfRun } from './store.ts';
