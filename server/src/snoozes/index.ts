// What other features may use of snoozes: which of a run's failures a snooze covers, and the
// quarantine policy's own snoozes (made and expired).
export { createSnooze, snoozedTestIdsOfRun, updateSnooze } from './store.ts';
