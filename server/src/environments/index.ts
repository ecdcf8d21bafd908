// What other features and the jobs layer may use of environments.
export { getEnvironment, getEnvironmentBySlug, listEnvironments, recordRepositoryListing, scheduledEnvironments } from './store.ts';
export { beatSync, type ClaimedSync, claimSync, finishSync } from './store.ts';
export { environmentForReport, environmentForRun, type FirstUse } from './active.ts';
