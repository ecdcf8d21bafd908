import type { ComponentChildren } from 'preact';
import type { TrackerSettings } from '../trackers/index.ts';
import { ApiForm, Field, FormSection, Options } from './components/forms.tsx';
import { TRACKER_NAMES } from './issue-section.tsx';

// The project's issue tracker on Settings: where issues are filed and the rules that file and
// follow them, as they stand (never a token or key: the API shows only whether one is set), and
// for an admin the form that saves them (PUT /api/tracker-settings, the API's own checks) and the
// button that removes them.

/** What the form reads of a destination: its type and where it acts. */
interface DestinationView {
  id: number;
  type: string;
  repo: string | null;
  project: string | null;
}

const yes = (on: boolean) => (on ? 'yes' : 'no');

function Where(props: { settings: TrackerSettings; destinations: DestinationView[] }) {
  const { settings } = props;
  if (settings.jira !== null)
    return (
      <>
        the Jira project <code>{settings.jira.project_key}</code> on <code class="url">{settings.jira.url}</code> ({settings.jira.issue_type}; token{' '}
        {settings.jira.has_token ? 'set' : 'not set'})
      </>
    );
  if (settings.linear !== null)
    return (
      <>
        the Linear team <code>{settings.linear.team_id}</code> (API key {settings.linear.has_api_key ? 'set' : 'not set'})
      </>
    );
  const destination = props.destinations.find((d) => d.id === settings.destination_id);
  const place = destination ? (destination.repo ?? destination.project ?? '') : `destination ${settings.destination_id}`;
  return (
    <>
      {TRACKER_NAMES[settings.tracker]} issues of <code>{place}</code>
    </>
  );
}

function Current(props: { settings: TrackerSettings | null; destinations: DestinationView[] }) {
  const { settings } = props;
  if (!settings)
    return (
      <p class="empty" data-tracker-settings="">
        No issue tracker: failures and flaky tests are linked to no issue.
      </p>
    );
  const rules: ComponentChildren[] = [
    <>
      default branch <code>{settings.default_branch}</code>
    </>,
    `issues for new failure groups: ${yes(settings.create_for_new_groups)}`,
    `for tests turned flaky: ${yes(settings.create_for_flaky_tests)}`,
    `for tests broken ${settings.broken_after_failures} runs in a row: ${yes(settings.create_for_broken_tests)}`,
    `a closed issue whose test still fails is ${settings.when_closed_failing === 'reopen' ? 'reopened' : 'commented on'}`,
    `after ${settings.passes_to_resolve} passes in a row it is commented on${settings.close_when_resolved ? ' and closed' : ''}`,
  ];
  return (
    <p data-tracker-settings="">
      Issues are filed in <Where settings={settings} destinations={props.destinations} />;{' '}
      {rules.map((rule, i) => (
        <>
          {i > 0 ? '; ' : null}
          {rule}
        </>
      ))}
      .
    </p>
  );
}

function YesNo(props: { id: string; name: string; label: string; on: boolean }) {
  return (
    <Field for={props.id} label={props.label}>
      <select id={props.id} name={props.name} data-type="bool">
        <Options
          choices={[
            ['true', 'yes'],
            ['false', 'no'],
          ]}
          value={props.on ? 'true' : 'false'}
        />
      </select>
    </Field>
  );
}

function Fields(props: { settings: TrackerSettings | null; destinations: DestinationView[] }) {
  const { settings } = props;
  const hosts = props.destinations.filter((d) => d.type === 'github' || d.type === 'gitlab');
  return (
    <>
      <Field for="trk-tracker" label="Tracker">
        <select id="trk-tracker" name="tracker" data-shows-fields="">
          <Options
            choices={(['github', 'gitlab', 'jira', 'linear'] as const).map((t) => [t, TRACKER_NAMES[t]] as const)}
            value={settings?.tracker ?? 'github'}
          />
        </select>
      </Field>
      <label data-types="github gitlab" for="trk-destination">
        Destination whose repository gets the issues (GitHub, GitLab)
        <select id="trk-destination" name="destination_id" data-type="number">
          <Options
            choices={hosts.map((d) => [d.id, `${TRACKER_NAMES[d.type as 'github' | 'gitlab']} ${d.repo ?? d.project ?? ''}`] as const)}
            value={settings?.destination_id ?? undefined}
          />
        </select>
      </label>
      <label data-types="jira" for="trk-jira-url">
        Jira site URL
        <input id="trk-jira-url" name="jira.url" type="url" maxlength={2000} size={40} required value={settings?.jira?.url ?? ''} />
      </label>
      <label data-types="jira" for="trk-jira-project">
        Jira project key
        <input id="trk-jira-project" name="jira.project_key" maxlength={100} required value={settings?.jira?.project_key ?? ''} />
      </label>
      <label data-types="jira" for="trk-jira-type">
        Kind of issue created (e.g. Bug)
        <input id="trk-jira-type" name="jira.issue_type" maxlength={255} required value={settings?.jira?.issue_type ?? 'Bug'} />
      </label>
      <label data-types="jira" for="trk-jira-email">
        Account email (Cloud; empty: a Data Center personal access token)
        <input id="trk-jira-email" name="jira.email" type="email" maxlength={320} data-optional="" value={settings?.jira?.email ?? ''} />
      </label>
      <label data-types="jira" for="trk-jira-token">
        API token (write-only{settings?.jira?.has_token ? '; empty: the one set is kept' : ''})
        <input id="trk-jira-token" name="jira.api_token" type="password" maxlength={2000} autocomplete="off" data-optional="" />
      </label>
      <label data-types="linear" for="trk-linear-team">
        Linear team id
        <input id="trk-linear-team" name="linear.team_id" maxlength={100} required value={settings?.linear?.team_id ?? ''} />
      </label>
      <label data-types="linear" for="trk-linear-key">
        API key (write-only{settings?.linear?.has_api_key ? '; empty: the one set is kept' : ''})
        <input id="trk-linear-key" name="linear.api_key" type="password" maxlength={2000} autocomplete="off" data-optional="" />
      </label>
      <Field for="trk-branch" label="Default branch">
        <input id="trk-branch" name="default_branch" maxlength={255} required value={settings?.default_branch ?? 'main'} />
      </Field>
      <YesNo id="trk-new-groups" name="create_for_new_groups" label="An issue for each failure group new on it" on={settings?.create_for_new_groups ?? false} />
      <YesNo id="trk-flaky" name="create_for_flaky_tests" label="An issue for each test turned flaky" on={settings?.create_for_flaky_tests ?? false} />
      <YesNo id="trk-broken" name="create_for_broken_tests" label="An issue for each test turned broken" on={settings?.create_for_broken_tests ?? false} />
      <Field for="trk-broken-after" label="Broken after failing this many runs in a row">
        <input
          id="trk-broken-after"
          name="broken_after_failures"
          type="number"
          min="2"
          max="100"
          required
          data-type="number"
          value={settings?.broken_after_failures ?? 3}
        />
      </Field>
      <Field for="trk-closed" label="A closed issue whose test fails again">
        <select id="trk-closed" name="when_closed_failing">
          <Options
            choices={[
              ['reopen', 'is reopened'],
              ['comment', 'is commented on'],
            ]}
            value={settings?.when_closed_failing === 'comment' ? 'comment' : 'reopen'}
          />
        </select>
      </Field>
      <Field for="trk-passes" label="Passes in a row before it is commented on">
        <input id="trk-passes" name="passes_to_resolve" type="number" min="1" max="1000" required data-type="number" value={settings?.passes_to_resolve ?? 5} />
      </Field>
      <YesNo id="trk-close" name="close_when_resolved" label="And closed then" on={settings?.close_when_resolved ?? false} />
    </>
  );
}

export function TrackerSettingsSection(props: { settings: TrackerSettings | null; destinations: DestinationView[] }) {
  const { settings } = props;
  return (
    <>
      <h2 id="tracker">Issue tracker</h2>
      <p class="muted">
        Where failure groups and tests get their issues (GitHub or GitLab issues through a destination of that type, Jira, Linear), the rules that file them on
        the default branch, and how a linked issue follows its test.
      </p>
      <Current settings={settings} destinations={props.destinations} />
      <FormSection id="tracker-form" heading={settings ? 'Change the tracker' : 'Set a tracker'} api="PUT /api/tracker-settings" level={3}>
        <ApiForm api="PUT /api/tracker-settings" then="reload" label="Save tracker">
          <Fields settings={settings} destinations={props.destinations} />
        </ApiForm>
      </FormSection>
      {settings ? <ApiForm api="DELETE /api/tracker-settings" then="reload" label="Remove tracker" /> : null}
    </>
  );
}
