import { h } from 'preact';
import { renderHtml, Trusted } from './components/html.ts';
import { renderPage, StateBadge, type Viewer } from './components/page.tsx';

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

// The page's shell is a component (components/page.tsx); these keep the string functions the pages
// not yet written as components call.

/** A run's state as a coloured badge (its colour from the stylesheet, by state). */
export function stateBadge(state: string): string {
  return renderHtml(h(StateBadge, { state }));
}

/** A whole page: the header (logo, projects, the project's sections, sign out) and `body`. */
export function layout(input: {
  title: string;
  viewer: Viewer | null;
  project?: { id: number; name: string };
  /** HTML its page escaped by hand. */
  body: string;
  /** Kept for the pages that pass it: every page loads the script now (the menu needs it), cached for good. */
  script?: boolean;
}): string {
  // trusted: `body` comes from a page still built as a string, which escapes its values with escapeXml.
  return renderPage({ title: input.title, viewer: input.viewer, project: input.project, children: h(Trusted, { html: input.body }) });
}
