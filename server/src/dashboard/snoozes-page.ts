import type { Project } from '../projects/index.ts';
import { escapeXml as e } from '../xml.ts';
import { apiForm, FORM_STYLE, formSection } from './forms.ts';
import { layout, type Viewer } from './layout.ts';

export interface SnoozeView {
  id: number;
  test_ids: string[];
  snooze_until: Date;
  description: string | null;
  scoped_to_environment_id: number | null;
  source: 'user' | 'auto';
  created_by: string | null;
}

export type SnoozeStatus = 'active' | 'expired' | 'all';

function row(snooze: SnoozeView, environments: Map<number, string>, titles: Map<string, string>, now: Date): string {
  const active = snooze.snooze_until > now;
  const where = snooze.scoped_to_environment_id === null ? 'every environment' : (environments.get(snooze.scoped_to_environment_id) ?? '?');
  const tests = snooze.test_ids.map((id) => `<li>${e(titles.get(id) ?? id)}</li>`).join('');
  const actions = [
    active ? apiForm(`PATCH /api/snoozes/${snooze.id}`, 'reload', 'Expire now', '<input type="hidden" name="expire_now" data-type="bool" value="true">') : '',
    apiForm(`DELETE /api/snoozes/${snooze.id}`, 'reload', 'Delete'),
  ].join('');
  return `<tr data-snooze="${snooze.id}"><td><ul class="tests">${tests}</ul>${snooze.description ? `<div class="muted">${e(snooze.description)}</div>` : ''}</td>
<td>${e(where)}</td><td>${active ? 'until' : 'ended'} ${e(snooze.snooze_until.toISOString().slice(0, 16).replace('T', ' '))}</td>
<td>${snooze.source === 'auto' ? 'quarantine policy' : 'a person'}</td><td><div class="actions">${actions}</div></td></tr>`;
}

function createForm(environments: Map<number, string>, today: string): string {
  const options = [...environments.entries()].map(([id, name]) => `<option value="${id}">${e(name)}</option>`).join('');
  return formSection(
    'new-snooze',
    'New snooze',
    apiForm(
      'POST /api/snoozes',
      'reload',
      'Snooze',
      `<label for="new-tests">Test ids (comma-separated)<input id="new-tests" name="test_ids" required data-type="csv" size="44"></label>
<label for="new-until">Until<input id="new-until" type="date" name="snooze_until" data-type="end-of-day" min="${today}" required></label>
<label for="new-where">Where<select id="new-where" name="scoped_to_environment_id" data-type="number" data-optional><option value="">every environment</option>${options}</select></label>
<label for="new-why">Reason<input id="new-why" name="description" maxlength="5000" data-optional></label>`,
    ),
  );
}

export function snoozesPage(
  viewer: Viewer,
  project: Project,
  view: { status: SnoozeStatus; snoozes: SnoozeView[]; environments: Map<number, string>; titles: Map<string, string>; now: Date },
): string {
  const tabs = (['active', 'expired', 'all'] as const)
    .map((status) => (status === view.status ? `<strong aria-current="page">${status}</strong>` : `<a href="?status=${status}">${status}</a>`))
    .join(' · ');
  const table =
    view.snoozes.length === 0
      ? '<p class="empty">No snooze here.</p>'
      : `<table><thead><tr><th scope="col">Tests</th><th scope="col">Where</th><th scope="col">When</th><th scope="col">Made by</th><th scope="col">Actions</th></tr></thead>
<tbody>${view.snoozes.map((snooze) => row(snooze, view.environments, view.titles, view.now)).join('')}</tbody></table>`;
  const body = `<h1>Snoozes of ${e(project.name)}</h1><nav aria-label="Which snoozes"><p>${tabs}</p></nav>${table}${createForm(view.environments, view.now.toISOString().slice(0, 10))}`;
  return layout({ title: `Snoozes · ${project.name}`, viewer, project, body, script: true, style: `${FORM_STYLE} ul.tests{margin:0;padding-left:1rem}` });
}
