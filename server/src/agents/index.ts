// What the entry points use of agents: their routes.
export { agentRoutes } from './routes.ts';
