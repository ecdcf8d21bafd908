import path from 'node:path';
import express from 'express';
import type { RouteContext } from '../http/route.ts';
import { installedPlaywright } from '@proctor/reporter/toolchain/packages';

/** Where Proctor serves Playwright's own trace viewer, the build its installed Playwright ships. */
export const TRACE_VIEWER_PATH = '/trace-viewer';

/**
 * The viewer loads its scripts, styles, fonts and service worker from this path, the trace from
 * this origin, and frames its own snapshots; nothing from elsewhere, so it works with no internet.
 */
export const TRACE_VIEWER_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "worker-src 'self'",
  "frame-src 'self'",
  "frame-ancestors 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'none'",
].join('; ');

/** The viewer's static files, found through the Playwright this server runs suites with. */
function viewerDirectory(): string {
  return path.join(installedPlaywright().core, 'lib', 'vite', 'traceViewer');
}

/**
 * A link, on this origin, that opens a trace in the viewer by its signed download URL (a path and
 * query). The viewer's service worker fetches the trace, which a bucket would have to allow by CORS:
 * `via=server` has the server stream it from any storage instead.
 */
export function traceViewerLink(tracePath: string): string {
  return `${TRACE_VIEWER_PATH}/index.html?trace=${encodeURIComponent(`${tracePath}&via=server`)}`;
}

export function traceViewerRoutes(ctx: RouteContext): void {
  ctx.open.use(
    TRACE_VIEWER_PATH,
    express.static(viewerDirectory(), {
      index: 'index.html',
      fallthrough: true,
      setHeaders: (res) => {
        res.setHeader('content-security-policy', TRACE_VIEWER_POLICY);
        res.setHeader('x-frame-options', 'SAMEORIGIN');
        res.setHeader('cache-control', 'public, max-age=3600');
      },
    }),
  );
}
