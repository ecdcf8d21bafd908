// What the entry points use of agents: their routes, and the sweep of runs none of whose agents is left to plan them.
export { finishUnplannedRuns } from './distribute.ts';
export { agentRoutes } from './routes.ts';
