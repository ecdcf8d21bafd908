// Likely failures first (issue 56): the order a run's tests are handed out in, from the environment's history.
export { orderRoutes } from './routes.ts';
export { orderStrategy } from './schema.ts';
export { historiesOf, historyBranch, unitRiskRanks } from './service.ts';
