import type { TrackerSettings } from '../trackers/index.ts';
import { escapeXml as e } from '../xml.ts';
import { apiForm, formSection } from './forms.ts';
import { TRACKER_NAMES } from './issue-section.ts';

// The project's issue tracker on Settings: where issues are filed and the rules that file and
// follow them, as they stand (never a token or key: the API shows only whether one is set), and
// for an admin the form that saves them (PUT /api/tracker-settings, the API's own checks) and the
// button that removes them. Every value shown or put in a field is escaped.

/** What the form reads of a destination: its type and where it acts. */
interface DestinationView {
  id: number;
  type: string;
  repo: string | null;
  project: string | null;
}

const yes = (on: boolean) => (on ? 'yes' : 'no');

function current(settings: TrackerSettings | null, destinations: DestinationView[]): string {
  if (!settings) return '<p class="empty" data-tracker-settings>No issue tracker: failures and flaky tests are linked to no issue.</p>';
  const where =
    settings.jira !== null
      ? `the Jira project <code>${e(settings.jira.project_key)}</code> on <code class="url">${e(settings.jira.url)}</code> (${e(settings.jira.issue_type)}; token ${settings.jira.has_token ? 'set' : 'not set'})`
      : settings.linear !== null
        ? `the Linear team <code>${e(settings.linear.team_id)}</code> (API key ${settings.linear.has_api_key ? 'set' : 'not set'})`
        : (() => {
            const destination = destinations.find((d) => d.id === settings.destination_id);
            const place = destination ? (destination.repo ?? destination.project ?? '') : `destination ${settings.destination_id}`;
            return `${TRACKER_NAMES[settings.tracker]} issues of <code>${e(place)}</code>`;
          })();
  const rules = [
    `default branch <code>${e(settings.default_branch)}</code>`,
    `issues for new failure groups: ${yes(settings.create_for_new_groups)}`,
    `for tests turned flaky: ${yes(settings.create_for_flaky_tests)}`,
    `for tests broken ${settings.broken_after_failures} runs in a row: ${yes(settings.create_for_broken_tests)}`,
    `a closed issue whose test still fails is ${settings.when_closed_failing === 'reopen' ? 'reopened' : 'commented on'}`,
    `after ${settings.passes_to_resolve} passes in a row it is commented on${settings.close_when_resolved ? ' and closed' : ''}`,
  ];
  return `<p data-tracker-settings>Issues are filed in ${where}; ${rules.join('; ')}.</p>`;
}

function fields(settings: TrackerSettings | null, destinations: DestinationView[]): string {
  const chosen = settings?.tracker ?? 'github';
  const option = (value: string, label: string, selected: boolean) => `<option value="${e(value)}"${selected ? ' selected' : ''}>${e(label)}</option>`;
  const hosts = destinations.filter((d) => d.type === 'github' || d.type === 'gitlab');
  const bool = (id: string, name: string, label: string, on: boolean) =>
    `<label for="${id}">${e(label)}<select id="${id}" name="${name}" data-type="bool">${option('true', 'yes', on)}${option('false', 'no', !on)}</select></label>`;
  const value = (text: string | null | undefined) => e(text ?? '');
  return `<label for="trk-tracker">Tracker<select id="trk-tracker" name="tracker" data-shows-fields>${(['github', 'gitlab', 'jira', 'linear'] as const).map((t) => option(t, TRACKER_NAMES[t], t === chosen)).join('')}</select></label>
<label data-types="github gitlab" for="trk-destination">Destination whose repository gets the issues (GitHub, GitLab)<select id="trk-destination" name="destination_id" data-type="number">${hosts
    .map((d) => option(String(d.id), `${TRACKER_NAMES[d.type as 'github' | 'gitlab']} ${d.repo ?? d.project ?? ''}`, d.id === settings?.destination_id))
    .join('')}</select></label>
<label data-types="jira" for="trk-jira-url">Jira site URL<input id="trk-jira-url" name="jira.url" type="url" maxlength="2000" size="40" required value="${value(settings?.jira?.url)}"></label>
<label data-types="jira" for="trk-jira-project">Jira project key<input id="trk-jira-project" name="jira.project_key" maxlength="100" required value="${value(settings?.jira?.project_key)}"></label>
<label data-types="jira" for="trk-jira-type">Kind of issue created (e.g. Bug)<input id="trk-jira-type" name="jira.issue_type" maxlength="255" required value="${value(settings?.jira?.issue_type ?? 'Bug')}"></label>
<label data-types="jira" for="trk-jira-email">Account email (Cloud; empty: a Data Center personal access token)<input id="trk-jira-email" name="jira.email" type="email" maxlength="320" data-optional value="${value(settings?.jira?.email)}"></label>
<label data-types="jira" for="trk-jira-token">API token (write-only${settings?.jira?.has_token ? '; empty: the one set is kept' : ''})<input id="trk-jira-token" name="jira.api_token" type="password" maxlength="2000" autocomplete="off" data-optional></label>
<label data-types="linear" for="trk-linear-team">Linear team id<input id="trk-linear-team" name="linear.team_id" maxlength="100" required value="${value(settings?.linear?.team_id)}"></label>
<label data-types="linear" for="trk-linear-key">API key (write-only${settings?.linear?.has_api_key ? '; empty: the one set is kept' : ''})<input id="trk-linear-key" name="linear.api_key" type="password" maxlength="2000" autocomplete="off" data-optional></label>
<label for="trk-branch">Default branch<input id="trk-branch" name="default_branch" maxlength="255" required value="${value(settings?.default_branch ?? 'main')}"></label>
${bool('trk-new-groups', 'create_for_new_groups', 'An issue for each failure group new on it', settings?.create_for_new_groups ?? false)}
${bool('trk-flaky', 'create_for_flaky_tests', 'An issue for each test turned flaky', settings?.create_for_flaky_tests ?? false)}
${bool('trk-broken', 'create_for_broken_tests', 'An issue for each test turned broken', settings?.create_for_broken_tests ?? false)}
<label for="trk-broken-after">Broken after failing this many runs in a row<input id="trk-broken-after" name="broken_after_failures" type="number" min="2" max="100" required data-type="number" value="${settings?.broken_after_failures ?? 3}"></label>
<label for="trk-closed">A closed issue whose test fails again<select id="trk-closed" name="when_closed_failing">${option('reopen', 'is reopened', settings?.when_closed_failing !== 'comment')}${option('comment', 'is commented on', settings?.when_closed_failing === 'comment')}</select></label>
<label for="trk-passes">Passes in a row before it is commented on<input id="trk-passes" name="passes_to_resolve" type="number" min="1" max="1000" required data-type="number" value="${settings?.passes_to_resolve ?? 5}"></label>
${bool('trk-close', 'close_when_resolved', 'And closed then', settings?.close_when_resolved ?? false)}`;
}

export function trackerSettingsSection(settings: TrackerSettings | null, destinations: DestinationView[]): string {
  const form = apiForm('PUT /api/tracker-settings', 'reload', 'Save tracker', fields(settings, destinations));
  const remove = settings ? apiForm('DELETE /api/tracker-settings', 'reload', 'Remove tracker') : '';
  return `<h2 id="tracker">Issue tracker</h2><p class="muted">Where failure groups and tests get their issues (GitHub or GitLab issues through a destination of that type, Jira, Linear), the rules that file them on the default branch, and how a linked issue follows its test.</p>
${current(settings, destinations)}${formSection('tracker-form', settings ? 'Change the tracker' : 'Set a tracker', form, 3)}${remove}`;
}
