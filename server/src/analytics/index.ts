// What other features and the jobs layer may use of analytics: a run's end queues its rollup, a
// job writes it, which tests an environment has run, and the reads the dashboard draws.
export { enqueueRollup, queuedRollups } from './rollups-store.ts';
export { rollUpNext } from './rollups.ts';
export {
  dailyRuns,
  type DailyRunRow,
  dailyTestCounts,
  type DayRun,
  lastRunOfDay,
  lastRunsByDay,
  type HistoryRow,
  meanDurations,
  testCaseMetrics,
  type TestCaseMetricsRow,
  testHistory,
  testsSeenIn,
} from './store.ts';
export { dayWindow } from './window.ts';
