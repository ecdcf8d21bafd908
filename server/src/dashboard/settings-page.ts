import type { Binding } from '../bindings/index.ts';
import type { QuarantinePolicy } from '../flaky/index.ts';
import type { Project } from '../projects/index.ts';
import { escapeXml as e } from '../xml.ts';
import { digestSettings, type DigestSettingsView } from './digest-settings.ts';
import { apiForm, formSection } from './forms.ts';
import { layout, type Viewer } from './layout.ts';
import { trackerSettingsSection } from './tracker-settings.ts';
import type { TrackerSettings } from '../trackers/index.ts';

/** A destination as the settings page lists it (the API's shape: never a secret). */
export interface DestinationView {
  id: number;
  type: 'slack' | 'webhook' | 'github' | 'gitlab' | 'email' | 'teams';
  url: string | null;
  repo: string | null;
  project: string | null;
  recipients: string[] | null;
  environments: string[];
  when: 'always' | 'failed' | 'changed' | 'never';
  has_secret: boolean;
}

const WHEN_TEXT = { always: 'every end', failed: 'failed or error', changed: 'a change of state', never: 'never (digests and owners only)' } as const;

function destinationRow(d: DestinationView): string {
  const target =
    d.type === 'github'
      ? `<code>${e(d.repo ?? '')}</code>`
      : d.type === 'gitlab'
        ? `<code>${e(d.project ?? '')}</code>`
        : d.type === 'email'
          ? e((d.recipients ?? []).join(', '))
          : `<code class="url">${e(d.url ?? '')}</code>`;
  const tokened = d.type === 'github' || d.type === 'gitlab';
  const secret = d.has_secret
    ? tokened
      ? 'token set'
      : d.type === 'teams'
        ? 'in the URL'
        : 'signed'
    : d.type === 'github'
      ? 'GitHub App'
      : d.type === 'gitlab'
        ? "the server's token"
        : '';
  return `<tr data-destination="${d.id}"><td>${e(d.type)}</td><td>${target}</td><td>${d.environments.length === 0 ? 'every environment' : e(d.environments.join(', '))}</td>
<td>${e(WHEN_TEXT[d.when])}</td><td>${e(secret)}</td><td>${apiForm(`DELETE /api/notification-destinations/${d.id}`, 'reload', 'Remove')}</td></tr>`;
}

/** A field of the destination form, for the types it names (the script shows it for those alone). */
function typeField(types: string, html: string): string {
  return html.replace(/^<label /, `<label data-types="${types}" `);
}

function destinationForm(mail: boolean): string {
  const fields = [
    `<label for="dest-type">Type<select id="dest-type" name="type" data-shows-fields><option value="slack">Slack</option><option value="teams">Microsoft Teams</option><option value="webhook">Webhook</option><option value="github">GitHub</option><option value="gitlab">GitLab</option>${mail ? '<option value="email">Email</option>' : ''}</select></label>`,
    typeField(
      'slack teams webhook',
      '<label for="dest-url">URL (Slack, Teams Workflows, webhook)<input id="dest-url" name="url" type="url" size="40" data-optional></label>',
    ),
    typeField('github', '<label for="dest-repo">Repository (GitHub, owner/name)<input id="dest-repo" name="repo" data-optional></label>'),
    typeField('gitlab', '<label for="dest-project">Project (GitLab, group/name or id)<input id="dest-project" name="project" data-optional></label>'),
    mail
      ? typeField(
          'email',
          '<label for="dest-recipients">Recipients (email, comma-separated)<input id="dest-recipients" name="recipients" data-type="csv" size="40" data-optional></label>',
        )
      : '',
    '<label for="dest-envs">Environments (slugs, comma-separated; none: all)<input id="dest-envs" name="environments" data-type="csv" data-optional></label>',
    '<label for="dest-when">When<select id="dest-when" name="when"><option value="always">every end</option><option value="failed">failed or error</option><option value="changed">a change of state</option><option value="never">never (digests and owners only)</option></select></label>',
    typeField(
      'webhook',
      '<label for="dest-secret">Webhook secret<input id="dest-secret" name="secret" type="password" autocomplete="new-password" data-optional></label>',
    ),
    typeField(
      'github gitlab',
      '<label for="dest-token">GitHub or GitLab token<input id="dest-token" name="token" type="password" autocomplete="new-password" data-optional></label>',
    ),
  ].join('\n');
  return formSection('new-destination', 'New destination', apiForm('POST /api/notification-destinations', 'reload', 'Add destination', fields), 3);
}

const HOST_TEXT = { github: 'GitHub', gitlab: 'GitLab' } as const;

/**
 * The repositories an instance admin bound to the project, where the server's GitHub App and
 * GitLab token may act for it: listed for everyone, bound and unbound by an instance admin alone.
 */
function bindingsSection(project: Project, bindings: Binding[], instanceAdmin: boolean): string {
  const path = `/api/projects/${project.id}/repository-bindings`;
  const row = (b: Binding) =>
    `<tr data-binding="${b.id}"><td>${HOST_TEXT[b.host]}</td><td><code>${e(b.name)}</code></td><td>${e(b.created_by ?? 'setup or the command line')}</td><td>${e(b.created_at.slice(0, 10))}</td>
<td>${apiForm(`DELETE ${path}/${b.id}`, 'reload', 'Unbind', '', instanceAdmin)}</td></tr>`;
  const table =
    bindings.length === 0
      ? '<p class="empty">No repository bound: the server\'s GitHub App and GitLab token act nowhere for this project (a destination with its own token still may).</p>'
      : `<table><thead><tr><th scope="col">Host</th><th scope="col">Repository</th><th scope="col">Bound by</th><th scope="col">On</th><th scope="col">Actions</th></tr></thead>
<tbody>${bindings.map(row).join('')}</tbody></table>`;
  const fields = `<label for="bind-host">Host<select id="bind-host" name="host"><option value="github">GitHub</option><option value="gitlab">GitLab</option></select></label>
<label for="bind-name">Repository (owner/name; GitLab: group/name or id)<input id="bind-name" name="name" required></label>`;
  return `<h2 id="repositories">Bound repositories</h2><p class="muted">Where the server's own GitHub App and GitLab token may act for this project's notifications; an instance admin binds them.</p>
${table}${formSection('new-binding', 'Bind a repository', apiForm(`POST ${path}`, 'reload', 'Bind', fields, instanceAdmin), 3)}`;
}

/** The project's test repository and whether reports make the environments they name. */
function projectForm(project: Project): string {
  const on = project.create_environments_on_first_use;
  const fields = `<label for="project-repo">Test repository (git URL or folder; empty: reports only)<input id="project-repo" name="repo_url" maxlength="2000" size="40" data-type="nullable" value="${e(project.repo_url ?? '')}"></label>
<label for="first-use">Environments on first use<select id="first-use" name="create_environments_on_first_use" data-type="bool"><option value="true"${on ? ' selected' : ''}>made by the first report that names one</option><option value="false"${on ? '' : ' selected'}>made by an admin only</option></select></label>`;
  // Said as it stands, not "Now: …" (the quarantine policy's line on the same page begins so).
  const now = `<p>${project.repo_url ? `Runs are triggered from <code class="url">${e(project.repo_url)}</code>` : 'No test repository: the project receives reports, and a trigger is refused until one is set'}; environments ${on ? 'are made on first use' : 'are made by an admin only'}.</p>`;
  return `${now}${apiForm('PATCH /api/project', 'reload', 'Save project', fields)}`;
}

/** The retention policy as it stands, for every role, and the form to change it for an admin. */
function retentionForm(policy: { results_days: number; artifacts_days: number }): string {
  const days = (n: number) => `${n} day${n === 1 ? '' : 's'}`;
  const current = `<p data-retention>Results are kept ${days(policy.results_days)} after their run ends, attachments ${days(policy.artifacts_days)}.</p>`;
  const fields = `<label for="keep-results">Results (days)<input id="keep-results" name="results_days" type="number" min="1" max="36500" required data-type="number" value="${policy.results_days}"></label>
<label for="keep-artifacts">Attachments (days)<input id="keep-artifacts" name="artifacts_days" type="number" min="1" max="36500" required data-type="number" value="${policy.artifacts_days}"></label>`;
  return `${current}${apiForm('PUT /api/retention-policy', 'reload', 'Save retention', fields)}`;
}

function quarantineForm(policy: QuarantinePolicy): string {
  const mode = (value: QuarantinePolicy['mode'], label: string) => `<option value="${value}"${policy.mode === value ? ' selected' : ''}>${label}</option>`;
  const fields = `<label for="q-mode">Mode<select id="q-mode" name="mode">${mode('off', 'off')}${mode('suggest', 'suggest (show, apply nothing)')}${mode('auto', 'auto (quarantine and release)')}</select></label>
<label for="q-threshold">Threshold (score, 0 to 1)<input id="q-threshold" name="threshold" type="number" min="0" max="1" step="0.01" required data-type="number" value="${policy.threshold}"></label>
<label for="q-cap">Cap (% of an environment's tests)<input id="q-cap" name="cap_percent" type="number" min="0" max="100" step="0.1" required data-type="number" value="${policy.cap_percent}"></label>
<label for="q-expiry">Expires after (days)<input id="q-expiry" name="expiry_days" type="number" min="1" max="365" required data-type="number" value="${policy.expiry_days}"></label>
<label for="q-release">Released after clean runs<input id="q-release" name="release_after_clean_runs" type="number" min="1" max="1000" required data-type="number" value="${policy.release_after_clean_runs}"></label>`;
  const form = apiForm('PUT /api/quarantine-policy', 'reload', 'Save quarantine policy', fields);
  const current = `<p>Now: <strong>${policy.mode}</strong>, threshold ${policy.threshold}, cap ${policy.cap_percent}%, ${policy.expiry_days} days, released after ${policy.release_after_clean_runs} clean runs.</p>`;
  return `${current}${form}`;
}

export function settingsPage(
  viewer: Viewer,
  project: Project,
  view: {
    destinations: DestinationView[];
    bindings: Binding[];
    /** Whether the viewer is an instance admin, who alone binds repositories. */
    instanceAdmin: boolean;
    policy: { results_days: number; artifacts_days: number };
    quarantine: QuarantinePolicy;
    /** Whether the server sends mail (PROCTOR_SMTP_URL): email destinations are offered. */
    mail: boolean;
    digests: Omit<DigestSettingsView, 'destinations'>;
    /** The issue tracker's settings as the API shows them (no token or key). */
    tracker: TrackerSettings | null;
  },
): string {
  const table =
    view.destinations.length === 0
      ? '<p class="empty">No destination: run endings are told nowhere.</p>'
      : `<table><thead><tr><th scope="col">Type</th><th scope="col">Where</th><th scope="col">Environments</th><th scope="col">When</th><th scope="col">Secret</th><th scope="col">Actions</th></tr></thead>
<tbody>${view.destinations.map(destinationRow).join('')}</tbody></table>`;
  const body = `<h1>Settings of ${e(project.name)}</h1>
<h2 id="project">Test repository and environments</h2><p class="muted">The repository triggered runs check out (reports, JUnit uploads and agents in the CI job's checkout need none), and whether a report, an upload or an agent naming an environment the project lacks makes it (its slug as its name).</p>
${projectForm(project)}
<h2>Notifications</h2><p class="muted">Where run endings are told: a Slack channel, a Microsoft Teams channel or chat (an Adaptive Card posted to its Workflows webhook), a webhook (signed with its secret), GitHub (a commit status and a pull request comment), GitLab (a commit status and a merge request note)${
    view.mail
      ? ', email (a mail to its recipients).'
      : '. This server sends no mail (its operator has not set PROCTOR_SMTP_URL): there are no email destinations.'
  }</p>
${table}${destinationForm(view.mail)}
${digestSettings({ ...view.digests, destinations: view.destinations })}
${trackerSettingsSection(view.tracker, view.destinations)}
${bindingsSection(project, view.bindings, view.instanceAdmin)}
<h2>Retention</h2><p class="muted">How long runs keep their results and attachments after they end; pinned runs and the daily rollups are kept whatever this says.</p>
${retentionForm(view.policy)}
<h2 id="quarantine">Quarantine</h2><p class="muted">Flaky tests whose score reaches the threshold are snoozed in their environment for a time, within the cap, and released after enough clean runs in a row; see <a href="/projects/${project.id}/flaky-tests">Flaky tests</a>.</p>
${quarantineForm(view.quarantine)}`;
  return layout({ title: `Settings · ${project.name}`, viewer, project, body, script: true });
}
