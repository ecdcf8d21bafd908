import { z } from 'zod';
import type { AppDeps } from '../context.ts';
import { pagePolicy } from '../http/headers.ts';
import { HttpError, notFound } from '../http/errors.ts';
import type { RouteContext } from '../http/route.ts';
import { addRoute } from '../http/route.ts';
import { getProject } from '../projects/index.ts';
import { runPageDetails } from './details.ts';
import { renderRunPage } from './page.tsx';
import { checkSummaryToken, SUMMARY_LINK_DAYS } from './present.ts';
import { runParams } from './schema.ts';
import * as store from './store.ts';

const TAG = 'Test runs';

/** The run page shows a failure's screenshots and videos: from this origin, or from the bucket its downloads redirect to. */
function runPageContentSecurityPolicy(storageOrigin: string | null): string {
  const sources = storageOrigin ? `'self' ${storageOrigin}` : "'self'";
  return `${pagePolicy(sources)}; media-src ${sources}`;
}
/** A run's page for people, by its signed link (summary_url): no key. */
export function runPageRoutes(ctx: RouteContext, deps: AppDeps): void {
  const { sql, clock, signingSecret } = deps;
  const runPagePolicy = runPageContentSecurityPolicy(deps.storage.direct?.origin ?? null);

  addRoute(ctx, {
    method: 'get',
    path: '/runs/:id',
    tag: TAG,
    summary: "The run's page for a person (summary_url): counts, failures with their errors, flaky, snoozed",
    public: true,
    params: runParams,
    query: z
      .object({ token: z.string().min(1).max(100), all: z.enum(['1']).optional().describe('list every passed and skipped test, not the first 200') })
      .strict(),
    produces: 'text/html',
    handler: async ({ params, query, res }) => {
      const token = checkSummaryToken(signingSecret, params.id, query.token, clock());
      if (token === 'invalid') throw notFound('test run');
      if (token === 'expired') {
        throw new HttpError(410, `this link to the run expired (links open for ${SUMMARY_LINK_DAYS} days); read the run again for a new one`);
      }
      const run = await store.getRunById(sql, params.id);
      if (!run) throw notFound('test run');
      const project = await getProject(sql, run.project_id);
      if (!project) throw notFound('project');
      const details = await runPageDetails(sql, deps, run, clock(), query.all === '1');
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.setHeader('cache-control', 'no-store');
      res.setHeader('content-security-policy', runPagePolicy);
      res.send(renderRunPage(project, run, details, `/runs/${run.id}?token=${encodeURIComponent(query.token)}&all=1`));
    },
  });
}
