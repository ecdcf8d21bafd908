import type { Viewer } from './components/page.tsx';

/**
 * Pages run and style themselves only with Proctor's own files (no inline script or style), call
 * only Proctor and post forms only to it; screenshots and videos come from Proctor or from the
 * bucket its downloads redirect to.
 */
export function dashboardPolicy(storageOrigin: string | null): string {
  const media = storageOrigin ? `'self' ${storageOrigin}` : "'self'";
  return `default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src ${media} data:; media-src ${media}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;
}

export const DASHBOARD_POLICY = dashboardPolicy(null);

/** Proctor's mark: a check mark on the colour of a passed run. */
const MARK = '<path d="M8 16.5l5.5 5.5L24 11" fill="none" stroke="#fff" stroke-width="3.5" stroke-linecap="round" stroke-linejoin="round"/>';

/** Proctor's icon, the favicon. */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1a7f37"/>${MARK}</svg>`;

export type { Viewer };
