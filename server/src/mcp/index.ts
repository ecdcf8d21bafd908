// What the app mounts of MCP: the /mcp endpoint and a run's Markdown.
export { mcpRouter, runSummaryRoutes } from './routes.ts';
