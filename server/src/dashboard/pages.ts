import type { Project } from '../projects/index.ts';
import { type RunRow, shownBranch } from '../runs/index.ts';
import { escapeXml as e } from '../xml.ts';
import { apiForm, formSection } from './forms.ts';
import { layout, stateBadge, type Viewer } from './layout.ts';

/** What the sign-in page offers besides the provider: a form that mails a link (the server sends mail), or the command that makes one. */
export interface SignInOptions {
  mail: boolean;
  /** Shown above the form: what became of a link asked for by email. */
  notice?: string | null;
  /** The email typed last, kept in the form. */
  email?: string;
}

export function signInPage(next: string, problem: string | null, provider: { name: string } | null, options: SignInOptions = { mail: false }): string {
  const oidc = provider
    ? `<p><a class="button" href="/sign-in/oidc?next=${encodeURIComponent(next)}">Sign in with ${e(provider.name)}</a></p><p class="muted">Or with a sign-in link:</p>`
    : '';
  const byMail = options.mail
    ? `<form method="post" action="/sign-in/email" class="filters"><input type="hidden" name="next" value="${e(next)}">
<label for="signin-email">Email<input id="signin-email" name="email" type="email" required maxlength="320" autocomplete="email" size="30" value="${e(options.email ?? '')}"></label>
<button type="submit">Email me a sign-in link</button></form>
<p class="muted">Or ask an administrator for a sign-in link, or make one on the server:</p>`
    : `<p>This server sends no mail (its operator has not set <code>PROCTOR_SMTP_URL</code>). Ask an administrator for a sign-in link, or make one on the server:</p>`;
  const body = `<h1>Sign in to Proctor</h1>
${problem ? `<p role="alert"><strong>${e(problem)}</strong></p>` : ''}${options.notice ? `<p role="status"><strong>${e(options.notice)}</strong></p>` : ''}${oidc}
${byMail}
<pre>npx proctor user login-link --email &lt;your email&gt;</pre>
<p class="muted">A link signs you in once, within 15 minutes of being made.</p>
${next !== '/' ? `<p class="muted">You will be taken back to <code>${e(next)}</code>.</p>` : ''}`;
  return layout({ title: 'Sign in', viewer: null, body });
}

/** A new project, for an instance admin: its maker becomes its first admin. */
function newProjectForm(): string {
  const fields = `<label for="project-name">Name<input id="project-name" name="name" required maxlength="200"></label>
<label for="project-repo">Test repository (git URL or folder; none for reports only)<input id="project-repo" name="repo_url" maxlength="2000" size="40" data-optional></label>`;
  return formSection('new-project', 'New project', apiForm('POST /api/projects', 'open-project', 'Create project', fields, true));
}

export function projectsPage(viewer: Viewer, projects: Project[], instanceAdmin: boolean): string {
  const rows = projects.map((p) => `<tr><td><a href="/projects/${p.id}/runs">${e(p.name)}</a></td><td class="muted">${e(p.repo_name)}</td></tr>`).join('');
  const list =
    projects.length === 0
      ? '<p class="empty">You are not a member of any project yet: an admin of one adds you.</p>'
      : `<table><thead><tr><th scope="col">Project</th><th scope="col">Repository</th></tr></thead><tbody>${rows}</tbody></table>`;
  const body = `<h1>Projects</h1>${list}${instanceAdmin ? newProjectForm() : ''}`;
  return layout({ title: 'Projects', viewer, body, script: instanceAdmin });
}

export interface RunsView {
  project: Project;
  runs: RunRow[];
  environments: { slug: string; name: string }[];
  filter: { environment?: string; branch?: string; state?: string };
  /** The API call that lists the same runs, for the live update. */
  liveUrl: string;
}

const STATES = ['pending', 'queued', 'running', 'passed', 'failed', 'error', 'cancelled'];
const UNDER_WAY = new Set(['pending', 'queued', 'running']);

function option(value: string, label: string, selected: string | undefined): string {
  return `<option value="${e(value)}"${value === (selected ?? '') ? ' selected' : ''}>${e(label)}</option>`;
}

function when(date: Date): string {
  return date.toISOString().replace('T', ' ').slice(0, 16);
}

function runRow(run: RunRow, link: string): string {
  const counts = `${run.success_count} passed · ${run.failed_count} failed · ${run.flaky_count} flaky`;
  return `<tr data-run="${run.id}"><td><a href="${e(link)}">#${run.number}</a></td><td data-state-cell>${stateBadge(run.state)}</td>
<td>${e(run.environment_name)}</td><td>${e(shownBranch(run) ?? '')}</td><td class="muted">${e((run.test_run_head_sha ?? run.commit ?? '').slice(0, 10))}</td>
<td data-counts>${counts}</td><td class="muted">${when(run.created_at)}</td></tr>`;
}

/** The fingerprint of what the list shows: the script reloads when the API's differs. */
export function runsFingerprint(runs: RunRow[]): string {
  return runs.map((r) => `${r.id}:${r.state}:${r.total_count}`).join(',');
}

/**
 * The list's stream: the runs it shows under way, the newest it shows and its filter, so that runs
 * made after the page was read come into it too (client/live.ts).
 */
function runsEvents(view: RunsView): string {
  const { project, runs, filter } = view;
  const query = new URLSearchParams({ after: String(Math.max(0, ...runs.map((run) => run.id))) });
  const underWay = runs.filter((run) => UNDER_WAY.has(run.state)).map((run) => run.id);
  if (underWay.length > 0) query.set('runs', underWay.join(','));
  for (const [name, value] of Object.entries(filter)) if (value) query.set(name, value);
  return `/projects/${project.id}/runs/events?${query.toString()}`;
}

export function runsPage(viewer: Viewer, view: RunsView): string {
  const { project, runs, filter } = view;
  const filters = `<form class="filters" method="get" role="search" aria-label="Filter runs">
<label>Environment<select name="environment">${option('', 'all', filter.environment)}${view.environments.map((env) => option(env.slug, env.name, filter.environment)).join('')}</select></label>
<label>Branch<input name="branch" value="${e(filter.branch ?? '')}" placeholder="any"></label>
<label>State<select name="state">${option('', 'any', filter.state)}${STATES.map((s) => option(s, s, filter.state)).join('')}</select></label>
<button type="submit">Filter</button></form>`;
  // The table is there when empty too (hidden), for the runs made while the page is open.
  const table = `${runs.length === 0 ? '<p class="empty" data-runs-empty>No run matches.</p>' : ''}<table data-runs data-live-url="${e(view.liveUrl)}" data-live-events="${e(runsEvents(view))}" data-project="${project.id}" data-fingerprint="${e(runsFingerprint(runs))}"${runs.length === 0 ? ' hidden' : ''}>
<thead><tr><th scope="col">Run</th><th scope="col">State</th><th scope="col">Environment</th><th scope="col">Branch</th><th scope="col">Commit</th><th scope="col">Tests</th><th scope="col">Created (UTC)</th></tr></thead>
<tbody>${runs.map((run) => runRow(run, `/projects/${project.id}/runs/${run.id}`)).join('')}</tbody></table>`;
  return layout({ title: `Runs · ${project.name}`, viewer, project, body: `<h1>Runs of ${e(project.name)}</h1>${filters}${table}` });
}
