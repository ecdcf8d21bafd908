import express, { Router } from 'express';
import { authenticate } from './auth/middleware.ts';
import type { AppDeps } from './context.ts';
import { errorMiddleware, unknownPath } from './http/errors.ts';
import { securityHeaders } from './http/headers.ts';
import { requestLogging } from './http/logging.ts';
import { createRegistry, generateDocument } from './http/openapi.ts';
import type { RouteContext } from './http/route.ts';
import { jsonBody } from './http/body.ts';
import { systemRoutes } from './system/routes.ts';
import { userRoutes } from './users/routes.ts';
import { environmentRoutes } from './environments/routes.ts';
import { resourceRoutes } from './resources/routes.ts';
import { artifactRoutes, traceViewerRoutes } from './artifacts/index.ts';
import { visualRoutes } from './visual/index.ts';
import { snoozeRoutes } from './snoozes/routes.ts';
import { testCaseRoutes } from './testcases/routes.ts';
import { runPageRoutes } from './runs/page-routes.ts';
import { liveRoutes } from './runs/live-routes.ts';
import { junitRoutes } from './junit/routes.ts';
import { runRoutes } from './runs/routes.ts';
import { badgeRoutes } from './badges/routes.ts';
import { failureGroupRoutes } from './failuregroups/routes.ts';
import { analyticsRoutes } from './analytics/routes.ts';
import { comparisonRoutes } from './comparisons/index.ts';
import { mcpRouter, runSummaryRoutes } from './mcp/index.ts';
import { digestRoutes } from './digests/index.ts';
import { searchRoutes } from './search/index.ts';
import { orderRoutes } from './order/index.ts';
import { slowerTestRoutes } from './durations/index.ts';
import { selectionRoutes } from './selection/index.ts';
import { flakyRoutes } from './flaky/index.ts';
import { dashboardRoutes } from './dashboard/routes.ts';
import { keyRoutes } from './keys/routes.ts';
import { memberRoutes } from './members/routes.ts';
import { projectRoutes, projectSettingRoutes } from './projects/routes.ts';
import { auditRoutes } from './audit/routes.ts';
import { bindingRoutes } from './bindings/index.ts';
import { retentionRoutes } from './retention/index.ts';
import { notificationRoutes, notificationRuleRoutes } from './notifications/index.ts';
import { trackerRoutes } from './trackers/index.ts';
import { agentRoutes } from './agents/index.ts';
import { createMailer } from './mail/index.ts';
import { type BranchLookup, lookUpBranches } from '@proctor/reporter/toolchain/repository';

/** What the app is built from: the branch lookup is `git ls-remote` unless a test gives its own. */
export type AppInput = Omit<AppDeps, 'branches'> & { branches?: BranchLookup };

/** Builds the Express app; no I/O happens until it serves requests. */
export function createApp(input: AppInput) {
  const deps: AppDeps = { ...input, branches: input.branches ?? lookUpBranches };
  const registry = createRegistry();
  const api = Router();
  const open = Router();
  const ctx: RouteContext = { api, open, registry, uploadIdleMs: deps.config.uploadIdleMs, checkResponses: deps.config.checkResponses };
  // Null when the server sends no mail: pages then show the links to pass on.
  const mailer = createMailer(deps.config.mail, deps.logger);

  userRoutes(ctx, deps.sql);
  environmentRoutes(ctx, deps);
  snoozeRoutes(ctx, deps);
  resourceRoutes(ctx, deps);
  artifactRoutes(ctx, deps);
  visualRoutes(ctx, deps);
  traceViewerRoutes(ctx);
  testCaseRoutes(ctx, deps);
  junitRoutes(ctx, deps);
  // Before the runs' routes: GET /api/test-runs/{id} would take the list's `events` for a run.
  liveRoutes(ctx, deps);
  runRoutes(ctx, deps);
  runPageRoutes(ctx, deps);
  comparisonRoutes(ctx, deps);
  runSummaryRoutes(ctx, deps);
  agentRoutes(ctx, deps);
  badgeRoutes(ctx, deps);
  failureGroupRoutes(ctx, deps);
  analyticsRoutes(ctx, deps);
  flakyRoutes(ctx, deps);
  slowerTestRoutes(ctx, deps);
  selectionRoutes(ctx, deps);
  digestRoutes(ctx, deps);
  searchRoutes(ctx, deps);
  orderRoutes(ctx, deps);
  retentionRoutes(ctx, deps);
  notificationRoutes(ctx, deps);
  trackerRoutes(ctx, deps);
  notificationRuleRoutes(ctx, deps);
  keyRoutes(ctx, deps);
  memberRoutes(ctx, deps, mailer);
  projectRoutes(ctx, deps);
  bindingRoutes(ctx, deps);
  projectSettingRoutes(ctx, deps);
  auditRoutes(ctx, deps.sql);
  dashboardRoutes(ctx, deps, mailer);

  let document: ReturnType<typeof generateDocument> | null = null;
  const openApiDocument = () => (document ??= generateDocument(registry, deps.config.publicUrl));
  systemRoutes(ctx, deps, openApiDocument);

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  app.use(requestLogging(deps.logger, deps.config.metrics !== null));
  app.use(securityHeaders);
  app.use(open);
  app.use('/api', authenticate(deps.sql, deps.clock), jsonBody(deps.config.bodyLimit));
  app.use('/mcp', authenticate(deps.sql, deps.clock), jsonBody(deps.config.bodyLimit), mcpRouter(deps));
  app.use(api);
  app.use(unknownPath);
  app.use(errorMiddleware);
  return { app, openApiDocument };
}
