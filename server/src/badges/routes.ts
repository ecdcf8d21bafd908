import { BADGE_CONTENT_TYPES, type BadgeFormat } from '@proctor/badge/spec';
import type { AppDeps } from '../context.ts';
import { addRoute, type RouteContext } from '../http/route.ts';
import { HttpError } from '../http/errors.ts';
import { etagOf, LruCache, RenderBudget, type RenderedBadge } from './cache.ts';
import { badgeSpec } from './present.ts';
import { badgeParams, badgeQuery } from './schema.ts';
import { type BadgeState, readBadgeState } from './store.ts';

/** Badges drawn, by their parameters: each a few kilobytes. */
const RENDERED_BADGES_KEPT = 2000;
/** Environments whose state is kept between reads (for PROCTOR_BADGE_STATE_TTL_MS). */
const BADGE_STATES_KEPT = 5000;
const CACHE_CONTROL = 'public, max-age=60, s-maxage=60, stale-while-revalidate=300';
/** PNG renders a client may start at once, and per second after: a README's badges, many times over. */
const PNG_RENDER_BURST = 30;
const PNG_RENDERS_PER_SECOND = 5;

export function badgeRoutes(ctx: RouteContext, deps: AppDeps): void {
  const rendered = new LruCache<RenderedBadge>(RENDERED_BADGES_KEPT);
  const states = new LruCache<{ state: BadgeState | null; at: number }>(BADGE_STATES_KEPT);
  const pngRenders = new RenderBudget(PNG_RENDER_BURST, PNG_RENDERS_PER_SECOND);
  const stateTtlMs = deps.config.badgeStateTtlMs;

  /** The environment's state, read at most once per TTL per environment. */
  async function stateOf(projectId: number, slug: string): Promise<BadgeState | null> {
    const key = `${projectId}/${slug}`;
    const now = deps.clock();
    const cached = states.get(key);
    if (cached && now.getTime() - cached.at < stateTtlMs) return cached.state;
    const state = await readBadgeState(deps.sql, projectId, slug, now);
    states.set(key, { state, at: now.getTime() });
    return state;
  }

  addRoute(ctx, {
    method: 'get',
    path: '/badges/:project_id/:file',
    tag: 'Badges',
    summary: 'Status badge of an environment: <slug>.svg, <slug>.png or <slug>.json (shields.io endpoint); public',
    public: true,
    params: badgeParams,
    query: badgeQuery,
    produces: 'image/svg+xml',
    handler: async ({ params, query, req, res }) => {
      const dot = params.file.lastIndexOf('.');
      const slug = params.file.slice(0, dot);
      const format = params.file.slice(dot + 1) as BadgeFormat;
      const { spec, found } = badgeSpec(await stateOf(params.project_id, slug), query);
      const key = JSON.stringify([format, format === 'png' ? query.scale : '1', spec]);
      let badge = rendered.get(key);
      if (!badge && format === 'png') {
        const budget = pngRenders.take(req.ip ?? 'unknown', deps.clock().getTime());
        if (!budget.ok) {
          res.setHeader('retry-after', String(budget.retryAfterS));
          throw new HttpError(429, `too many new PNG badges from this client; retry in ${budget.retryAfterS} s (badges already made are not limited)`);
        }
      }
      if (!badge) {
        // Loaded at the first badge drawn: badge-maker and resvg are a tenth of a process's memory.
        const { renderBadge } = await import('@proctor/badge');
        const body = renderBadge(spec, format, { scale: query.scale === '2' ? 2 : 1 });
        badge = { body, contentType: BADGE_CONTENT_TYPES[format], etag: etagOf(key) };
        rendered.set(key, badge);
      }
      res.status(found ? 200 : 404);
      res.setHeader('cache-control', CACHE_CONTROL);
      res.setHeader('etag', badge.etag);
      res.setHeader('content-type', badge.contentType);
      if (found && req.get('if-none-match') === badge.etag) {
        res.status(304).end();
        return;
      }
      res.end(badge.body);
    },
  });
}
