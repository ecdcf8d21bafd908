import { escapeXml as e } from '../xml.ts';
import { dashboardAssets } from './assets.ts';
import { mayCall } from './permissions.ts';

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

/** The logo in the header: the mark, coloured by the theme's stylesheet, and the name. */
const LOGO = `<svg class="logo" viewBox="0 0 32 32" aria-hidden="true" focusable="false"><rect class="mark" width="32" height="32" rx="7"/>${MARK}</svg><span>Proctor</span>`;

/** The signed-in person a page is rendered for. */
export interface Viewer {
  userId: string;
  name: string;
  email: string;
  csrfToken: string;
}

/** A run's state as a coloured badge (its colour from the stylesheet, by state). */
export function stateBadge(state: string): string {
  return `<span class="state state-${e(state)}">${e(state)}</span>`;
}

/** A project's sections: the daily ones on the header's line, the rarer ones under Manage. */
function projectLinks(project: { id: number; name: string }): string {
  const base = `/projects/${project.id}`;
  const link = ([path, label]: [string, string]) => `<a href="${base}/${path}">${label}</a>`;
  const daily: [string, string][] = [
    ['runs', 'Runs'],
    ['tests', 'Tests'],
    ['flaky-tests', 'Flaky tests'],
    ['failure-groups', 'Failure groups'],
    ['environments', 'Environments'],
    ['snoozes', 'Snoozes'],
    ['analytics', 'Analytics'],
  ];
  const manage: [string, string][] = [
    ['members', 'Members'],
    ['settings', 'Settings'],
    ...(mayCall('GET /api/keys')
      ? ([
          ['keys', 'Keys'],
          ['audit', 'Audit'],
        ] as [string, string][])
      : []),
  ];
  return `<span class="project" title="${e(project.name)}">${e(project.name)}</span><span class="sections">${daily.map(link).join('')}</span><details class="more"><summary>Manage</summary><div class="links">${manage.map(link).join('')}</div></details>`;
}

/** A whole page: the header (logo, projects, the project's sections, sign out) and `body`. */
export function layout(input: {
  title: string;
  viewer: Viewer | null;
  project?: { id: number; name: string };
  body: string;
  /** Kept for the pages that pass it: every page loads the script now (the menu needs it), cached for good. */
  script?: boolean;
}): string {
  const { viewer, project } = input;
  const assets = dashboardAssets();
  const menu = viewer
    ? `<button type="button" class="menu-button" aria-expanded="false" aria-controls="site-menu" hidden>Menu</button>
<div class="menu" id="site-menu"><nav class="main" aria-label="Main"><a href="/">Projects</a>${project ? projectLinks(project) : ''}</nav>
<div class="account"><span class="muted who">${e(viewer.name || viewer.email)}</span>
<form method="post" action="/sign-out"><input type="hidden" name="_csrf" value="${e(viewer.csrfToken)}"><button type="submit">Sign out</button></form></div></div>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
${viewer ? `<meta name="csrf-token" content="${e(viewer.csrfToken)}">` : ''}${project ? `<meta name="project-id" content="${project.id}">` : ''}
<link rel="icon" type="image/svg+xml" href="/favicon.svg"><title>${e(input.title)} · Proctor</title>
<link rel="stylesheet" href="${assets.style}"><script src="${assets.script}" defer></script>
</head><body><header class="site"><a class="brand" href="/">${LOGO}</a>${menu}</header><main>${input.body}</main></body></html>`;
}
