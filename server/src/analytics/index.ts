// What other features may use of analytics: a run's end adds it to the rollups.
export { rollupRun } from './rollups.ts';
