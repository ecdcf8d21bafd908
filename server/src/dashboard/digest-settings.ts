import type { OwnerRoute, Subscription } from '../notifications/index.ts';
import { escapeXml as e } from '../xml.ts';
import { apiForm, formSection } from './forms.ts';

// The settings page's digests and owners' routing rules: what is sent where and when, and the
// forms an admin adds them with (the API's calls, POST /api/digest-subscriptions and /api/owner-routes).

/** What these sections show of a destination (the API's shape: never a secret). */
interface DestinationView {
  id: number;
  type: string;
  url: string | null;
  recipients: string[] | null;
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
  const where = d.type === 'email' ? (d.recipients ?? []).join(', ') : (d.url ?? '');
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

export function digestSettings(view: DigestSettingsView): string {
  const byId = new Map(view.destinations.map((d) => [d.id, d]));
  const envName = new Map(view.environments.map((env) => [env.id, env.name]));
  const people = view.destinations.filter((d) => d.type === 'slack' || d.type === 'teams' || d.type === 'email');
  const destinationOptions = people.map((d) => `<option value="${d.id}">${e(destinationLabel(d, d.id))}</option>`).join('');

  const subscriptions =
    view.subscriptions.length === 0
      ? '<p class="empty">No digest is sent: the digest page shows it on demand.</p>'
      : `<table><thead><tr><th scope="col">Environment</th><th scope="col">Sent to</th><th scope="col">When</th><th scope="col">Next</th><th scope="col">Latest</th><th scope="col">Actions</th></tr></thead>
<tbody>${view.subscriptions
          .map(
            (s) =>
              `<tr data-subscription="${s.id}"><td>${e(envName.get(s.environment_id) ?? String(s.environment_id))}</td><td>${e(destinationLabel(byId.get(s.destination_id), s.destination_id))}</td><td>${e(when(s))}</td><td>${e(s.next_due_at.slice(0, 16).replace('T', ' '))} UTC</td><td>${e(lastDelivery(s))}</td><td>${apiForm(`DELETE /api/digest-subscriptions/${s.id}`, 'reload', 'Remove')}</td></tr>`,
          )
          .join('')}</tbody></table>`;
  const subscribeFields = `<label for="dig-env">Environment<select id="dig-env" name="environment_id" data-type="number">${view.environments
    .map((env) => `<option value="${env.id}">${e(env.name)}</option>`)
    .join('')}</select></label>
<label for="dig-dest">Destination (Slack, Teams, email)<select id="dig-dest" name="destination_id" data-type="number">${destinationOptions}</select></label>
<label for="dig-period">Period<select id="dig-period" name="period" data-shows-fields><option value="week">weekly</option><option value="day">daily</option></select></label>
<label data-types="week" for="dig-weekday">Weekday<select id="dig-weekday" name="weekday" data-type="number">${WEEKDAYS.map((day, i) => `<option value="${i + 1}">${day}</option>`).join('')}</select></label>
<label for="dig-hour">Hour (0-23)<input id="dig-hour" name="hour" type="number" min="0" max="23" value="8" required data-type="number"></label>
<label for="dig-tz">Time zone (IANA)<input id="dig-tz" name="time_zone" value="UTC" maxlength="64" required></label>`;

  const routes =
    view.routes.length === 0
      ? '<p class="empty">No routing rule: owners\' failures go only where every run\'s ending goes.</p>'
      : `<table><thead><tr><th scope="col">Owner</th><th scope="col">Sent to</th><th scope="col">Actions</th></tr></thead>
<tbody>${view.routes
          .map(
            (r) =>
              `<tr data-owner-route="${r.id}"><td><code>${e(r.owner)}</code></td><td>${e(destinationLabel(byId.get(r.destination_id), r.destination_id))}</td><td>${apiForm(`DELETE /api/owner-routes/${r.id}`, 'reload', 'Remove')}</td></tr>`,
          )
          .join('')}</tbody></table>`;
  const routeFields = `<label for="route-owner">Owner (@user, @org/team, an address; * matches any characters)<input id="route-owner" name="owner" maxlength="200" required></label>
<label for="route-dest">Destination (Slack, Teams, email)<select id="route-dest" name="destination_id" data-type="number">${destinationOptions}</select></label>`;

  const noPeople =
    people.length === 0 ? '<p class="muted">Add a Slack, Teams or email destination first (its When may be "never": digests and owners only).</p>' : '';
  return `<h2 id="digests">Digests</h2><p class="muted">An environment's daily or weekly digest (runs and pass rate against the period before, the tests that turned flaky or broken, got slower, the flakiest, most failing and slowest), sent once per period at an hour of a time zone. It covers whole UTC days, up to the day before it is sent.</p>
${subscriptions}${noPeople}${people.length > 0 && view.environments.length > 0 ? formSection('new-digest', 'New digest', apiForm('POST /api/digest-subscriptions', 'reload', 'Subscribe', subscribeFields), 3) : ''}
<h2 id="owner-routes">Owners' failures</h2><p class="muted">A failed run's failed tests owned (CODEOWNERS or an owner annotation) by the owner a rule names are also told to its destination, only theirs listed, once per run.</p>
${routes}${people.length > 0 ? formSection('new-owner-route', 'New routing rule', apiForm('POST /api/owner-routes', 'reload', 'Add rule', routeFields), 3) : ''}`;
}
