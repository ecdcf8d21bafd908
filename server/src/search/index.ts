// Finding things in a project by a text: the header's search box, the API and MCP.
export { searchRoutes } from './routes.ts';
export { type SearchResult, searchQuery } from './schema.ts';
export { searchProject } from './service.ts';
