// A project's digest: what a daily or weekly report says, read by the API, the dashboard and MCP.
export { digestRoutes } from './routes.ts';
export { type Digest, DIGEST_PERIODS, type DigestPeriod } from './schema.ts';
export { composeDigest } from './service.ts';
