// What other features may use of affected runs (issue 56, point 3): the executor chooses a run's
// tests with them, the runs' answer and page show the selection.
export { selectionRoutes } from './routes.ts';
export { affectedBase, describeSelection, reasonForAll } from './service.ts';
export { affectedAsked, lastPassingRun, recordSelection } from './store.ts';
export { type RerunTest, type RunSelection, runSelectionSchema } from './schema.ts';
