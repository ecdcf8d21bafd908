// What other features may use of snoozes: which of a run's failures a snooze covers, and the
// quarantine policy's own snoozes (made and expired), and the list the dashboard shows.
export { activeSnoozesOfTests, createSnooze, listSnoozes, snoozedTestIdsOfRun, snoozesOfTest, updateSnooze } from './store.ts';
export type { SnoozeRow } from './store.ts';
export { snoozeTests } from './service.ts';
