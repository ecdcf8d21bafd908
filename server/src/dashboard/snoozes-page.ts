import type { Project } from '../projects/index.ts';
import { escapeXml as e } from '../xml.ts';
import { apiForm, formSection } from './forms.ts';
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

/** Who made a snooze, as a person reads it. */
export function snoozeAuthor(snooze: { source: 'user' | 'auto'; created_by: string | null }, authors: Map<string, string>): string {
  if (snooze.source === 'auto') return 'the quarantine policy';
  return snooze.created_by ? (authors.get(snooze.created_by) ?? 'a former member') : 'an API key';
}

function row(snooze: SnoozeView, environments: Map<number, string>, titles: Map<string, string>, authors: Map<string, string>, now: Date): string {
  const active = snooze.snooze_until > now;
  const where = snooze.scoped_to_environment_id === null ? 'every environment' : (environments.get(snooze.scoped_to_environment_id) ?? '?');
  const tests = snooze.test_ids.map((id) => `<li>${e(titles.get(id) ?? id)}</li>`).join('');
  const actions = [
    active ? apiForm(`PATCH /api/snoozes/${snooze.id}`, 'reload', 'Expire now', '<input type="hidden" name="expire_now" data-type="bool" value="true">') : '',
    apiForm(`DELETE /api/snoozes/${snooze.id}`, 'reload', 'Delete'),
  ].join('');
  return `<tr data-snooze="${snooze.id}"><td><ul class="tests">${tests}</ul>${snooze.description ? `<div class="muted">${e(snooze.description)}</div>` : ''}</td>
<td>${e(where)}</td><td>${active ? 'until' : 'ended'} ${e(snooze.snooze_until.toISOString().slice(0, 16).replace('T', ' '))}</td>
<td>${e(snoozeAuthor(snooze, authors))}</td><td><div class="actions">${actions}</div></td></tr>`;
}

/** Tests a person found by their words, to pick for a new snooze. */
export interface FoundTests {
  words: string;
  tests: { id: string; name: string; file_path: string; runner_project: string; tags: string[] }[];
  total: number;
}

function findForm(status: SnoozeStatus, found: FoundTests | null): string {
  return `<form class="filters" method="get" role="search" aria-label="Find tests to snooze"><input type="hidden" name="status" value="${status}">
<label for="find-tests">Find tests (title, file or @tag)<input id="find-tests" name="find" value="${e(found?.words ?? '')}" maxlength="200"></label><button type="submit">Find</button></form>`;
}

function pickedTests(found: FoundTests | null): string {
  if (!found) return '';
  if (found.tests.length === 0) return `<p class="muted">No test matches ${e(JSON.stringify(found.words))}.</p>`;
  const items = found.tests
    .map(
      (test) => `<li><label class="pick"><input type="checkbox" name="test_ids" data-type="list" value="${e(test.id)}"> ${e(test.name)}
<span class="muted">${e([test.file_path, test.runner_project, ...test.tags].filter(Boolean).join(' · '))}</span></label></li>`,
    )
    .join('');
  const more =
    found.total > found.tests.length ? `<p class="muted">The first ${found.tests.length} of ${found.total}: narrow the words to see the others.</p>` : '';
  return `<fieldset class="picked"><legend>Tests found for ${e(JSON.stringify(found.words))}: pick those to snooze</legend><ul>${items}</ul>${more}</fieldset>`;
}

function createForm(environments: Map<number, string>, today: string, status: SnoozeStatus, found: FoundTests | null): string {
  const options = [...environments.entries()].map(([id, name]) => `<option value="${id}">${e(name)}</option>`).join('');
  const form = apiForm(
    'POST /api/snoozes',
    'reload',
    'Snooze',
    `${pickedTests(found)}<label for="new-tests">${found ? 'More test ids' : 'Test ids'} (comma-separated)<input id="new-tests" name="test_ids" data-type="csv" size="44" data-optional></label>
<label for="new-until">Until<input id="new-until" type="date" name="snooze_until" data-type="end-of-day" min="${today}" required></label>
<label for="new-where">Where<select id="new-where" name="scoped_to_environment_id" data-type="number" data-optional><option value="">every environment</option>${options}</select></label>
<label for="new-why">Reason<input id="new-why" name="description" maxlength="5000" data-optional></label>`,
  );
  return form ? formSection('new-snooze', 'New snooze', `${findForm(status, found)}${form}`) : '';
}

export function snoozesPage(
  viewer: Viewer,
  project: Project,
  view: {
    status: SnoozeStatus;
    snoozes: SnoozeView[];
    environments: Map<number, string>;
    titles: Map<string, string>;
    authors: Map<string, string>;
    found: FoundTests | null;
    now: Date;
  },
): string {
  const tabs = (['active', 'expired', 'all'] as const)
    .map((status) => (status === view.status ? `<strong aria-current="page">${status}</strong>` : `<a href="?status=${status}">${status}</a>`))
    .join(' · ');
  const table =
    view.snoozes.length === 0
      ? '<p class="empty">No snooze here.</p>'
      : `<table><thead><tr><th scope="col">Tests</th><th scope="col">Where</th><th scope="col">When</th><th scope="col">Made by</th><th scope="col">Actions</th></tr></thead>
<tbody>${view.snoozes.map((snooze) => row(snooze, view.environments, view.titles, view.authors, view.now)).join('')}</tbody></table>`;
  const body = `<h1>Snoozes of ${e(project.name)}</h1><nav aria-label="Which snoozes"><p>${tabs}</p></nav>${table}${createForm(view.environments, view.now.toISOString().slice(0, 10), view.status, view.found)}`;
  return layout({
    title: `Snoozes · ${project.name}`,
    viewer,
    project,
    body,
    script: true,
  });
}
