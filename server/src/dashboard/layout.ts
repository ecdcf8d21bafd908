import { STATE_COLOURS } from '../runs/index.ts';
import { escapeXml as e } from '../xml.ts';
import { mayCall } from './permissions.ts';

/**
 * Pages style themselves inline, run only Proctor's own script, call only Proctor and post forms
 * only to it; screenshots and videos come from Proctor or from the bucket its downloads redirect to.
 */
export function dashboardPolicy(storageOrigin: string | null): string {
  const media = storageOrigin ? `'self' ${storageOrigin}` : "'self'";
  return `default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self'; img-src ${media} data:; media-src ${media}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;
}

export const DASHBOARD_POLICY = dashboardPolicy(null);

/** Proctor's icon: a check mark on the colour of a passed run. */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="${STATE_COLOURS.passed ?? '#1a7f37'}"/><path d="M8 16.5l5.5 5.5L24 11" fill="none" stroke="#fff" stroke-width="3.5" stroke-linecap="round" stroke-linejoin="round"/></svg>`;

/** The signed-in person a page is rendered for. */
export interface Viewer {
  userId: string;
  name: string;
  email: string;
  csrfToken: string;
}

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1f2328}
header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;padding:.6rem 1.5rem;background:#f6f8fa;border-bottom:1px solid #d0d7de}
header nav{display:flex;flex-wrap:wrap;gap:.25rem 1rem;flex:1} header a{color:#1f2328;text-decoration:none;font-weight:600}
header form{margin:0} button{font:inherit;padding:.25rem .75rem;border:1px solid #8c959f;border-radius:6px;background:#fff;cursor:pointer}
main{max-width:1100px;margin:1.5rem auto;padding:0 1rem} h1{font-size:1.4rem;margin:0 0 1rem}
table{border-collapse:collapse;width:100%} th,td{border-bottom:1px solid #d0d7de;padding:.4rem;text-align:left;vertical-align:top}
a{color:#0550ae} .muted{color:#57606a} .state{color:#fff;border-radius:1rem;padding:.05rem .6rem;font-size:.85rem;white-space:nowrap}
form.filters{display:flex;gap:.75rem;flex-wrap:wrap;align-items:end;margin-bottom:1rem} label{display:flex;flex-direction:column;font-size:.85rem;color:#57606a}
select,input{font:inherit;padding:.2rem .4rem;border:1px solid #8c959f;border-radius:6px;color:#1f2328}
a.button{display:inline-block;padding:.4rem 1rem;border-radius:6px;background:#1f6feb;color:#fff;text-decoration:none;font-weight:600}
.scroll{overflow-x:auto} td{overflow-wrap:anywhere}
@media (max-width:700px){header{padding:.5rem 1rem} main{margin:1rem auto;padding:0 .75rem} table{display:block;overflow-x:auto} svg.strip{max-width:100%;height:auto}}
.empty{padding:2rem;text-align:center;color:#57606a;border:1px dashed #d0d7de;border-radius:6px}
`;

export function stateBadge(state: string): string {
  return `<span class="state" style="background:${STATE_COLOURS[state] ?? '#57606a'}">${e(state)}</span>`;
}

function projectLinks(project: { id: number; name: string }): string {
  const base = `/projects/${project.id}`;
  return `<span class="muted">${e(project.name)}:</span><a href="${base}/runs">Runs</a><a href="${base}/tests">Tests</a><a href="${base}/flaky-tests">Flaky tests</a><a href="${base}/environments">Environments</a><a href="${base}/failure-groups">Failure groups</a><a href="${base}/snoozes">Snoozes</a><a href="${base}/analytics">Analytics</a><a href="${base}/members">Members</a><a href="${base}/settings">Settings</a>${
    mayCall('GET /api/keys') ? `<a href="${base}/keys">Keys</a><a href="${base}/audit">Audit</a>` : ''
  }`;
}

/** A whole page: the header (projects, the project's sections, sign out) and `body`. */
export function layout(input: {
  title: string;
  viewer: Viewer | null;
  project?: { id: number; name: string };
  body: string;
  /** Whether the page needs the dashboard's script: live lists, actions. */
  script?: boolean;
  style?: string;
}): string {
  const { viewer, project } = input;
  const nav = viewer
    ? `<nav aria-label="Main"><a href="/">Projects</a>${project ? projectLinks(project) : ''}</nav>
<span class="muted">${e(viewer.name || viewer.email)}</span>
<form method="post" action="/sign-out"><input type="hidden" name="_csrf" value="${e(viewer.csrfToken)}"><button type="submit">Sign out</button></form>`
    : '<nav aria-label="Main"><a href="/">Proctor</a></nav>';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
${viewer ? `<meta name="csrf-token" content="${e(viewer.csrfToken)}">` : ''}${project ? `<meta name="project-id" content="${project.id}">` : ''}
<link rel="icon" type="image/svg+xml" href="/favicon.svg"><title>${e(input.title)} · Proctor</title><style>${STYLE}${input.style ?? ''}</style>
${input.script ? '<script src="/assets/dashboard.js" defer></script>' : ''}
</head><body><header>${nav}</header><main>${input.body}</main></body></html>`;
}
