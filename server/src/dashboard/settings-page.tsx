import type { ComponentChildren } from 'preact';
import type { Binding } from '../bindings/index.ts';
import type { QuarantinePolicy } from '../flaky/index.ts';
import type { Project } from '../projects/index.ts';
import type { TrackerSettings } from '../trackers/index.ts';
import { ApiForm, Field, FormSection, Options } from './components/forms.tsx';
import { renderPage, type Viewer } from './components/page.tsx';
import { Empty, Table } from './components/table.tsx';
import { DigestSettings, type DigestSettingsView } from './digest-settings.tsx';
import { TrackerSettingsSection } from './tracker-settings.tsx';

/** A destination as the settings page lists it (the API's shape: never a secret). */
export interface DestinationView {
  id: number;
  type: 'slack' | 'webhook' | 'github' | 'gitlab' | 'email' | 'teams';
  url: string | null;
  repo: string | null;
  project: string | null;
  recipients: string[] | null;
  /** A Slack destination by bot token: the channel or user id it posts to. */
  channel?: string | null;
  environments: string[];
  when: 'always' | 'failed' | 'changed' | 'never';
  has_secret: boolean;
}

const WHEN_TEXT = { always: 'every end', failed: 'failed or error', changed: 'a change of state', never: 'never (digests and owners only)' } as const;

function secretText(d: DestinationView): string {
  const tokened = d.type === 'github' || d.type === 'gitlab' || Boolean(d.channel);
  if (d.has_secret) return tokened ? 'token set' : d.type === 'teams' ? 'in the URL' : 'signed';
  return d.type === 'github' ? 'GitHub App' : d.type === 'gitlab' ? "the server's token" : '';
}

function DestinationRow(props: { d: DestinationView }) {
  const { d } = props;
  return (
    <tr data-destination={String(d.id)}>
      <td>{d.type}</td>
      <td>
        {d.type === 'github' ? (
          <code>{d.repo ?? ''}</code>
        ) : d.type === 'gitlab' ? (
          <code>{d.project ?? ''}</code>
        ) : d.type === 'email' ? (
          (d.recipients ?? []).join(', ')
        ) : d.channel ? (
          <code>chat.postMessage to {d.channel}</code>
        ) : (
          <code class="url">{d.url ?? ''}</code>
        )}
      </td>
      <td>{d.environments.length === 0 ? 'every environment' : d.environments.join(', ')}</td>
      <td>{WHEN_TEXT[d.when]}</td>
      <td>{secretText(d)}</td>
      <td>
        <ApiForm api={`DELETE /api/notification-destinations/${d.id}`} then="reload" label="Remove" />
      </td>
    </tr>
  );
}

/** A field of the destination form, for the types it names (the script shows it for those alone). */
function TypeField(props: { types: string; for: string; label: string; children: ComponentChildren }) {
  return (
    <label data-types={props.types} for={props.for}>
      {props.label}
      {props.children}
    </label>
  );
}

function DestinationForm(props: { mail: boolean }) {
  const types: [string, string][] = [
    ['slack', 'Slack'],
    ['teams', 'Microsoft Teams'],
    ['webhook', 'Webhook'],
    ['github', 'GitHub'],
    ['gitlab', 'GitLab'],
    ...(props.mail ? ([['email', 'Email']] as [string, string][]) : []),
  ];
  return (
    <FormSection id="new-destination" heading="New destination" api="POST /api/notification-destinations" level={3}>
      <ApiForm api="POST /api/notification-destinations" then="reload" label="Add destination">
        <Field for="dest-type" label="Type">
          <select id="dest-type" name="type" data-shows-fields="">
            <Options choices={types} value={undefined} />
          </select>
        </Field>
        <TypeField types="slack teams webhook" for="dest-url" label="URL (Slack incoming webhook, Teams Workflows, webhook)">
          <input id="dest-url" name="url" type="url" size={40} data-optional="" />
        </TypeField>
        <TypeField types="slack" for="dest-channel" label="Or a Slack app: channel id (C…, G…) or user id (U…, W…) to post to, with its bot token below">
          <input id="dest-channel" name="channel" size={16} data-optional="" />
        </TypeField>
        <TypeField types="github" for="dest-repo" label="Repository (GitHub, owner/name)">
          <input id="dest-repo" name="repo" data-optional="" />
        </TypeField>
        <TypeField types="gitlab" for="dest-project" label="Project (GitLab, group/name or id)">
          <input id="dest-project" name="project" data-optional="" />
        </TypeField>
        {props.mail ? (
          <TypeField types="email" for="dest-recipients" label="Recipients (email, comma-separated)">
            <input id="dest-recipients" name="recipients" data-type="csv" size={40} data-optional="" />
          </TypeField>
        ) : null}
        <Field for="dest-envs" label="Environments (slugs, comma-separated; none: all)">
          <input id="dest-envs" name="environments" data-type="csv" data-optional="" />
        </Field>
        <Field for="dest-when" label="When">
          <select id="dest-when" name="when">
            <Options choices={Object.entries(WHEN_TEXT)} value={undefined} />
          </select>
        </Field>
        <TypeField types="webhook" for="dest-secret" label="Webhook secret">
          <input id="dest-secret" name="secret" type="password" autocomplete="new-password" data-optional="" />
        </TypeField>
        <TypeField types="github gitlab slack" for="dest-token" label="GitHub or GitLab token, or the Slack app's bot token (xoxb-…)">
          <input id="dest-token" name="token" type="password" autocomplete="new-password" data-optional="" />
        </TypeField>
      </ApiForm>
    </FormSection>
  );
}

const HOST_TEXT = { github: 'GitHub', gitlab: 'GitLab' } as const;

/**
 * The repositories an instance admin bound to the project, where the server's GitHub App and
 * GitLab token may act for it: listed for everyone, bound and unbound by an instance admin alone.
 */
function BindingsSection(props: { project: Project; bindings: Binding[]; instanceAdmin: boolean }) {
  const path = `/api/projects/${props.project.id}/repository-bindings`;
  return (
    <>
      <h2 id="repositories">Bound repositories</h2>
      <p class="muted">Where the server's own GitHub App and GitLab token may act for this project's notifications; an instance admin binds them.</p>
      {props.bindings.length === 0 ? (
        <Empty>No repository bound: the server's GitHub App and GitLab token act nowhere for this project (a destination with its own token still may).</Empty>
      ) : (
        <Table head={['Host', 'Repository', 'Bound by', 'On', 'Actions']}>
          {props.bindings.map((b) => (
            <tr data-binding={String(b.id)}>
              <td>{HOST_TEXT[b.host]}</td>
              <td>
                <code>{b.name}</code>
              </td>
              <td>{b.created_by ?? 'setup or the command line'}</td>
              <td>{b.created_at.slice(0, 10)}</td>
              <td>
                <ApiForm api={`DELETE ${path}/${b.id}`} then="reload" label="Unbind" offered={props.instanceAdmin} />
              </td>
            </tr>
          ))}
        </Table>
      )}
      <FormSection id="new-binding" heading="Bind a repository" api={`POST ${path}`} offered={props.instanceAdmin} level={3}>
        <ApiForm api={`POST ${path}`} then="reload" label="Bind" offered={props.instanceAdmin}>
          <Field for="bind-host" label="Host">
            <select id="bind-host" name="host">
              <Options choices={Object.entries(HOST_TEXT)} value={undefined} />
            </select>
          </Field>
          <Field for="bind-name" label="Repository (owner/name; GitLab: group/name or id)">
            <input id="bind-name" name="name" required />
          </Field>
        </ApiForm>
      </FormSection>
    </>
  );
}

/** The project's test repository and whether reports make the environments they name. */
function ProjectForm(props: { project: Project }) {
  const { project } = props;
  const on = project.create_environments_on_first_use;
  return (
    <>
      {/* Said as it stands, not "Now: …" (the quarantine policy's line on the same page begins so). */}
      <p>
        {project.repo_url ? (
          <>
            Runs are triggered from <code class="url">{project.repo_url}</code>
          </>
        ) : (
          'No test repository: the project receives reports, and a trigger is refused until one is set'
        )}
        ; environments {on ? 'are made on first use' : 'are made by an admin only'}.
      </p>
      <ApiForm api="PATCH /api/project" then="reload" label="Save project">
        <Field for="project-repo" label="Test repository (git URL or folder; empty: reports only)">
          <input id="project-repo" name="repo_url" maxlength={2000} size={40} data-type="nullable" value={project.repo_url ?? ''} />
        </Field>
        <Field for="first-use" label="Environments on first use">
          <select id="first-use" name="create_environments_on_first_use" data-type="bool">
            <Options
              choices={[
                ['true', 'made by the first report that names one'],
                ['false', 'made by an admin only'],
              ]}
              value={on ? 'true' : 'false'}
            />
          </select>
        </Field>
      </ApiForm>
    </>
  );
}

/** The retention policy as it stands, for every role, and the form to change it for an admin. */
function RetentionForm(props: { policy: { results_days: number; artifacts_days: number } }) {
  const { policy } = props;
  const days = (n: number) => `${n} day${n === 1 ? '' : 's'}`;
  return (
    <>
      <p data-retention="">
        Results are kept {days(policy.results_days)} after their run ends, attachments {days(policy.artifacts_days)}.
      </p>
      <ApiForm api="PUT /api/retention-policy" then="reload" label="Save retention">
        <Field for="keep-results" label="Results (days)">
          <input id="keep-results" name="results_days" type="number" min="1" max="36500" required data-type="number" value={policy.results_days} />
        </Field>
        <Field for="keep-artifacts" label="Attachments (days)">
          <input id="keep-artifacts" name="artifacts_days" type="number" min="1" max="36500" required data-type="number" value={policy.artifacts_days} />
        </Field>
      </ApiForm>
    </>
  );
}

function QuarantineForm(props: { policy: QuarantinePolicy }) {
  const { policy } = props;
  const number = (id: string, name: keyof QuarantinePolicy, label: string, range: { min: string; max: string; step?: string }) => (
    <Field for={id} label={label}>
      <input id={id} name={name} type="number" {...range} required data-type="number" value={String(policy[name])} />
    </Field>
  );
  return (
    <>
      <p>
        Now: <strong>{policy.mode}</strong>, threshold {policy.threshold}, cap {policy.cap_percent}%, {policy.expiry_days} days, released after{' '}
        {policy.release_after_clean_runs} clean runs.
      </p>
      <ApiForm api="PUT /api/quarantine-policy" then="reload" label="Save quarantine policy">
        <Field for="q-mode" label="Mode">
          <select id="q-mode" name="mode">
            <Options
              choices={[
                ['off', 'off'],
                ['suggest', 'suggest (show, apply nothing)'],
                ['auto', 'auto (quarantine and release)'],
              ]}
              value={policy.mode}
            />
          </select>
        </Field>
        {number('q-threshold', 'threshold', 'Threshold (score, 0 to 1)', { min: '0', max: '1', step: '0.01' })}
        {number('q-cap', 'cap_percent', "Cap (% of an environment's tests)", { min: '0', max: '100', step: '0.1' })}
        {number('q-expiry', 'expiry_days', 'Expires after (days)', { min: '1', max: '365' })}
        {number('q-release', 'release_after_clean_runs', 'Released after clean runs', { min: '1', max: '1000' })}
      </ApiForm>
    </>
  );
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
  return renderPage({
    title: `Settings · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <h1>Settings of {project.name}</h1>
        <h2 id="project">Test repository and environments</h2>
        <p class="muted">
          The repository triggered runs check out (reports, JUnit uploads and agents in the CI job's checkout need none), and whether a report, an upload or an
          agent naming an environment the project lacks makes it (its slug as its name).
        </p>
        <ProjectForm project={project} />
        <h2>Notifications</h2>
        <p class="muted">
          Where run endings are told: a Slack channel (its incoming webhook), a Slack channel or person (a Slack app's bot token and a channel or user id,
          posted with chat.postMessage), a Microsoft Teams channel or chat (an Adaptive Card posted to its Workflows webhook), a webhook (signed with its
          secret), GitHub (a commit status and a pull request comment), GitLab (a commit status and a merge request note)
          {view.mail
            ? ', email (a mail to its recipients).'
            : '. This server sends no mail (its operator has not set PROCTOR_SMTP_URL): there are no email destinations.'}
        </p>
        {view.destinations.length === 0 ? (
          <Empty>No destination: run endings are told nowhere.</Empty>
        ) : (
          <Table head={['Type', 'Where', 'Environments', 'When', 'Secret', 'Actions']}>
            {view.destinations.map((d) => (
              <DestinationRow d={d} />
            ))}
          </Table>
        )}
        <DestinationForm mail={view.mail} />
        <DigestSettings view={{ ...view.digests, destinations: view.destinations }} />
        <TrackerSettingsSection settings={view.tracker} destinations={view.destinations} />
        <BindingsSection project={project} bindings={view.bindings} instanceAdmin={view.instanceAdmin} />
        <h2>Retention</h2>
        <p class="muted">How long runs keep their results and attachments after they end; pinned runs and the daily rollups are kept whatever this says.</p>
        <RetentionForm policy={view.policy} />
        <h2 id="quarantine">Quarantine</h2>
        <p class="muted">
          Flaky tests whose score reaches the threshold are snoozed in their environment for a time, within the cap, and released after enough clean runs in a
          row; see <a href={`/projects/${project.id}/flaky-tests`}>Flaky tests</a>.
        </p>
        <QuarantineForm policy={view.quarantine} />
      </>
    ),
  });
}
