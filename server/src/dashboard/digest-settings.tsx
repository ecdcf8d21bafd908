import type { OwnerRoute, Subscription } from '../notifications/index.ts';
import { ApiForm, Field, FormSection, Options } from './components/forms.tsx';
import { Empty, Table } from './components/table.tsx';

// The settings page's digests and owners' routing rules: what is sent where and when, and the
// forms an admin adds them with (the API's calls, POST /api/digest-subscriptions and /api/owner-routes).

/** What these sections show of a destination (the API's shape: never a secret). */
interface DestinationView {
  id: number;
  type: string;
  url: string | null;
  recipients: string[] | null;
  repo?: string | null;
  project?: string | null;
  /** A Slack destination by bot token: the channel or person it posts to. */
  channel?: string | null;
}

export interface DigestSettingsView {
  subscriptions: Subscription[];
  routes: OwnerRoute[];
  destinations: DestinationView[];
  environments: { id: number; name: string }[];
}

const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

/** A destination as a person recognises it: its type and where it goes (never a secret: the API's masked shape). */
function destinationLabel(d: DestinationView | undefined, id: number): string {
  if (!d) return `destination ${id}`;
  const where =
    d.type === 'email'
      ? (d.recipients ?? []).join(', ')
      : d.channel
        ? `to ${d.channel}`
        : d.type === 'github'
          ? (d.repo ?? '')
          : d.type === 'gitlab'
            ? (d.project ?? '')
            : (d.url ?? '');
  return `${d.type} ${where}`.trim();
}

function when(s: Subscription): string {
  const hour = `${String(s.hour).padStart(2, '0')}:00 ${s.time_zone}`;
  return s.period === 'day' ? `daily at ${hour}` : `weekly, ${WEEKDAYS[(s.weekday ?? 1) - 1]} at ${hour}`;
}

function lastDelivery(s: Subscription): string {
  const last = s.last_delivery;
  if (!last) return 'none yet';
  return `${last.state} (${last.due_at.slice(0, 16).replace('T', ' ')} UTC)${last.last_error ? `: ${last.last_error}` : ''}`;
}

function SubscribeFields(props: { environments: DigestSettingsView['environments']; destinations: DestinationView[] }) {
  return (
    <>
      <Field for="dig-env" label="Environment">
        <select id="dig-env" name="environment_id" data-type="number">
          <Options choices={props.environments.map((env) => [env.id, env.name] as const)} value={undefined} />
        </select>
      </Field>
      <DestinationField id="dig-dest" destinations={props.destinations} />
      <Field for="dig-period" label="Period">
        <select id="dig-period" name="period" data-shows-fields="">
          <option value="week">weekly</option>
          <option value="day">daily</option>
        </select>
      </Field>
      <label data-types="week" for="dig-weekday">
        Weekday
        <select id="dig-weekday" name="weekday" data-type="number">
          <Options choices={WEEKDAYS.map((day, i) => [i + 1, day] as const)} value={undefined} />
        </select>
      </label>
      <Field for="dig-hour" label="Hour (0-23)">
        <input id="dig-hour" name="hour" type="number" min="0" max="23" value="8" required data-type="number" />
      </Field>
      <Field for="dig-tz" label="Time zone (IANA)">
        <input id="dig-tz" name="time_zone" value="UTC" maxlength={64} required />
      </Field>
    </>
  );
}

function DestinationField(props: { id: string; destinations: DestinationView[] }) {
  return (
    <Field for={props.id} label="Destination (Slack, Teams, email)">
      <select id={props.id} name="destination_id" data-type="number">
        <Options choices={props.destinations.map((d) => [d.id, destinationLabel(d, d.id)] as const)} value={undefined} />
      </select>
    </Field>
  );
}

export function DigestSettings(props: { view: DigestSettingsView }) {
  const { view } = props;
  const byId = new Map(view.destinations.map((d) => [d.id, d]));
  const envName = new Map(view.environments.map((env) => [env.id, env.name]));
  const people = view.destinations.filter((d) => d.type === 'slack' || d.type === 'teams' || d.type === 'email');
  return (
    <>
      <h2 id="digests">Digests</h2>
      <p class="muted">
        An environment's daily or weekly digest (runs and pass rate against the period before, the tests that turned flaky or broken, got slower, the flakiest,
        most failing and slowest), sent once per period at an hour of a time zone. It covers whole UTC days, up to the day before it is sent.
      </p>
      {view.subscriptions.length === 0 ? (
        <Empty>No digest is sent: the digest page shows it on demand.</Empty>
      ) : (
        <Table head={['Environment', 'Sent to', 'When', 'Next', 'Latest', 'Actions']}>
          {view.subscriptions.map((s) => (
            <tr data-subscription={String(s.id)}>
              <td>{envName.get(s.environment_id) ?? String(s.environment_id)}</td>
              <td>{destinationLabel(byId.get(s.destination_id), s.destination_id)}</td>
              <td>{when(s)}</td>
              <td>{s.next_due_at.slice(0, 16).replace('T', ' ')} UTC</td>
              <td>{lastDelivery(s)}</td>
              <td>
                <ApiForm api={`DELETE /api/digest-subscriptions/${s.id}`} then="reload" label="Remove" />
              </td>
            </tr>
          ))}
        </Table>
      )}
      {people.length === 0 ? <p class="muted">Add a Slack, Teams or email destination first (its When may be "never": digests and owners only).</p> : null}
      {people.length > 0 && view.environments.length > 0 ? (
        <FormSection id="new-digest" heading="New digest" api="POST /api/digest-subscriptions" level={3}>
          <ApiForm api="POST /api/digest-subscriptions" then="reload" label="Subscribe">
            <SubscribeFields environments={view.environments} destinations={people} />
          </ApiForm>
        </FormSection>
      ) : null}
      <h2 id="owner-routes">Owners' failures</h2>
      <p class="muted">
        A failed run's failed tests owned (CODEOWNERS or an owner annotation) by the owner a rule names are also told to its destination, only theirs listed,
        once per run.
      </p>
      {view.routes.length === 0 ? (
        <Empty>No routing rule: owners' failures go only where every run's ending goes.</Empty>
      ) : (
        <Table head={['Owner', 'Sent to', 'Actions']}>
          {view.routes.map((r) => (
            <tr data-owner-route={String(r.id)}>
              <td>
                <code>{r.owner}</code>
              </td>
              <td>{destinationLabel(byId.get(r.destination_id), r.destination_id)}</td>
              <td>
                <ApiForm api={`DELETE /api/owner-routes/${r.id}`} then="reload" label="Remove" />
              </td>
            </tr>
          ))}
        </Table>
      )}
      {people.length > 0 ? (
        <FormSection id="new-owner-route" heading="New routing rule" api="POST /api/owner-routes" level={3}>
          <ApiForm api="POST /api/owner-routes" then="reload" label="Add rule">
            <Field for="route-owner" label="Owner (@user, @org/team, an address; * matches any characters)">
              <input id="route-owner" name="owner" maxlength={200} required />
            </Field>
            <DestinationField id="route-dest" destinations={people} />
          </ApiForm>
        </FormSection>
      ) : null}
    </>
  );
}
