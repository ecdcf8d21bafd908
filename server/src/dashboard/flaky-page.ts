import { DAY_MS } from '../context.ts';
import { type DailyFlakiness, type EventRow, type FlakinessRow, MIN_RUNS, type QuarantinePolicy, runsNeeded } from '../flaky/index.ts';
import type { Project } from '../projects/index.ts';
import type { SnoozeRow } from '../snoozes/index.ts';
import { escapeXml as e } from '../xml.ts';
import { apiForm, foldedForm } from './forms.ts';
import { layout, type Viewer } from './layout.ts';
import { snoozeAuthor } from './snoozes-page.ts';

/** The page's class filter: one class, every class, or what a team lead looks for first. */
export const CLASS_CHOICES = ['flaky-broken', 'flaky', 'broken', 'unknown', 'healthy', 'all'] as const;
export type ClassChoice = (typeof CLASS_CHOICES)[number];
const CLASS_LABELS: Record<ClassChoice, string> = {
  'flaky-broken': 'flaky or broken, and early failures',
  flaky: 'flaky',
  broken: 'broken',
  unknown: 'too few runs',
  healthy: 'healthy',
  all: 'every class',
};

export interface FlakyTestsView {
  filter: { environmentId: number; class: ClassChoice; search: string; days: number };
  environments: { id: number; name: string }[];
  rows: FlakinessRow[];
  total: number;
  /** The window's days, oldest first, and each listed test's daily counts (by `environment:test`). */
  days: string[];
  trends: Map<string, DailyFlakiness[]>;
  /** The snooze in force over each listed test where it is listed (by `environment:test`). */
  quarantines: Map<string, SnoozeRow>;
  authors: Map<string, string>;
  events: EventRow[];
  titles: Map<string, string>;
  policy: QuarantinePolicy;
  /** The tests the window counts runs for (in the environment chosen), and the most runs counted for one. */
  counted: { tests: number; mostRuns: number };
  now: Date;
}

export const trendKey = (environmentId: number, testCaseId: string): string => `${environmentId}:${testCaseId}`;

const dateOf = (at: Date) => at.toISOString().slice(0, 10);

/** A test's daily flaky share over the window as small bars; a day without a counted run is a grey tick. */
function trend(days: string[], daily: DailyFlakiness[]): string {
  const byDay = new Map(daily.map((row) => [row.day, row]));
  const flakyDays = daily.filter((row) => row.flaky_runs > 0).length;
  const label = `Flaky on ${flakyDays} of the ${daily.length} days with runs in the last ${days.length} days`;
  const bars = days
    .map((day, i) => {
      const row = byDay.get(day);
      const x = i * 5;
      if (!row || row.counted_runs === 0) return `<rect x="${x}" y="17" width="4" height="1" fill="#d0d7de"><title>${day}: no counted run</title></rect>`;
      const height = Math.max(1, Math.round((row.flaky_runs / row.counted_runs) * 18));
      const colour = row.flaky_runs > 0 ? '#9a6700' : '#1a7f37';
      return `<rect x="${x}" y="${18 - height}" width="4" height="${height}" fill="${colour}"><title>${day}: flaky in ${row.flaky_runs} of ${row.counted_runs} runs</title></rect>`;
    })
    .join('');
  return `<svg class="trend" role="img" aria-label="${e(label)}" width="${days.length * 5}" height="18" xmlns="http://www.w3.org/2000/svg"><title>${e(label)}</title>${bars}</svg>`;
}

/** Whether and why the test is quarantined where it is listed, and the action that changes it. */
function quarantineCell(row: FlakinessRow, view: FlakyTestsView): string {
  const snooze = view.quarantines.get(trendKey(row.environment_id, row.test_case_id));
  if (snooze) {
    const everywhere = snooze.scoped_to_environment_id === null;
    const release =
      snooze.test_ids.length === 1
        ? apiForm(`PATCH /api/snoozes/${snooze.id}`, 'reload', 'Release', '<input type="hidden" name="expire_now" data-type="bool" value="true">')
        : apiForm(
            `PATCH /api/snoozes/${snooze.id}`,
            'reload',
            'Release',
            `<input type="hidden" name="test_ids" data-type="csv" value="${e(snooze.test_ids.filter((id) => id !== row.test_case_id).join(','))}">`,
          );
    return `<strong>${snooze.source === 'auto' ? 'Quarantined' : 'Snoozed'}</strong> until ${e(dateOf(snooze.snooze_until))}${everywhere ? ' in every environment' : ''}
<div class="muted">by ${e(snoozeAuthor(snooze, view.authors))} (<span class="source">${snooze.source}</span>)${snooze.description ? `: ${e(snooze.description)}` : ''}</div>${release}`;
  }
  const { policy } = view;
  const suggested =
    policy.mode === 'suggest' && row.class === 'flaky' && row.score >= policy.threshold
      ? `<div class="muted">The policy would quarantine it (score at least ${policy.threshold})</div>`
      : '';
  const until = dateOf(new Date(view.now.getTime() + policy.expiry_days * DAY_MS));
  const id = `quarantine-${row.environment_id}-${row.test_case_id}`;
  const fields = `<input type="hidden" name="test_ids" data-type="list" value="${e(row.test_case_id)}">
<input type="hidden" name="scoped_to_environment_id" data-type="number" value="${row.environment_id}">
<label for="${id}-until">Until<input id="${id}-until" type="date" name="snooze_until" data-type="end-of-day" min="${dateOf(view.now)}" value="${until}" required></label>
<label for="${id}-why">Reason<input id="${id}-why" name="description" maxlength="5000" value="Quarantined from the flaky tests page" data-optional></label>`;
  return `${suggested}${foldedForm('snooze', 'Quarantine', apiForm('POST /api/snoozes', 'reload', 'Quarantine this test', fields))}`;
}

/** The class, and for a test with too few runs how many more it needs. */
function classCell(row: FlakinessRow): string {
  if (row.class !== 'unknown') return `<span class="class class-${row.class}">${row.class}</span>`;
  const needed = runsNeeded(row);
  return `<span class="class class-unknown">too few runs</span><div class="muted needs">${needed} more run${needed === 1 ? '' : 's'} for a class</div>`;
}

/** How often the test was flaky, and failed when it did, of its counted runs. */
function runsCell(row: FlakinessRow): string {
  const failed = row.failed_runs > 0 ? `<div class="muted">failed in ${row.failed_runs} of ${row.runs_counted}</div>` : '';
  return `${row.flaky_runs} of ${row.runs_counted}${failed}`;
}

/** Why nothing is listed: no counted run yet, nothing flaky or failing, or the search. */
function emptyState(view: FlakyTestsView): string {
  const { counted, filter } = view;
  const window = `the last ${filter.days} days`;
  if (counted.tests === 0)
    return `<p class="empty">No run of ${filter.environmentId ? 'this environment' : 'this project'} has been counted in ${window} yet. A run counts once it ends passed or failed with at most 80% of its tests failed (a run where nearly everything failed says more about its environment than its tests). A test gets a class after ${MIN_RUNS} counted runs; before that it is listed here as soon as it fails or passes on a retry.</p>`;
  const tests = `${counted.tests} test${counted.tests === 1 ? '' : 's'}`;
  const early =
    counted.mostRuns < MIN_RUNS
      ? ` Tests get a class after ${MIN_RUNS} counted runs (the most any has is ${counted.mostRuns}); meanwhile the ones that fail or pass on a retry are listed under "${CLASS_LABELS['flaky-broken']}".`
      : '';
  if (filter.search)
    return `<p class="empty">No test whose title or file contains "${e(filter.search)}" is ${e(CLASS_LABELS[filter.class])} in ${window} (${tests} counted).${early}</p>`;
  if (filter.class === 'flaky-broken') return `<p class="empty">None of the ${tests} counted in ${window} was flaky or failed: nothing to look at.${early}</p>`;
  return `<p class="empty">No test is in the class "${e(CLASS_LABELS[filter.class])}" in ${window} (${tests} counted).${early}</p>`;
}

function testRow(project: Project, row: FlakinessRow, view: FlakyTestsView, environments: Map<number, string>): string {
  const key = trendKey(row.environment_id, row.test_case_id);
  const lastFlaky = row.last_flaky_run_id === null ? '–' : `<a href="/projects/${project.id}/runs/${row.last_flaky_run_id}">#${row.last_flaky_run_number}</a>`;
  const where = [row.file_path, row.runner_project].filter(Boolean).map((part) => e(part));
  return `<tr data-test="${e(row.test_case_id)}" data-environment="${row.environment_id}">
<td><a href="/projects/${project.id}/tests/${e(row.test_case_id)}">${e(row.title || row.test_case_id)}</a><div class="muted">${where.join(' · ')}</div></td>
<td>${e(environments.get(row.environment_id) ?? '?')}</td><td>${classCell(row)}</td>
<td>${(row.score * 100).toFixed(0)}%</td><td>${runsCell(row)}</td><td>${lastFlaky}</td>
<td>${trend(view.days, view.trends.get(key) ?? [])}</td><td>${quarantineCell(row, view)}</td></tr>`;
}

function filters(view: FlakyTestsView): string {
  const { filter } = view;
  const option = (value: string | number, label: string, selected: boolean) => `<option value="${value}"${selected ? ' selected' : ''}>${e(label)}</option>`;
  return `<form class="filters" method="get" role="search" aria-label="Find flaky tests">
<label>Environment<select name="environment_id">${option(0, 'every environment', filter.environmentId === 0)}${view.environments
    .map((env) => option(env.id, env.name, env.id === filter.environmentId))
    .join('')}</select></label>
<label>Class<select name="class">${CLASS_CHOICES.map((choice) => option(choice, CLASS_LABELS[choice], choice === filter.class)).join('')}</select></label>
<label>Search<input name="search" value="${e(filter.search)}" placeholder="title or file"></label>
<button type="submit">Find</button></form>`;
}

function eventsSection(project: Project, view: FlakyTestsView, environments: Map<number, string>): string {
  if (view.events.length === 0) return '<h2>Quarantine events</h2><p class="muted">The quarantine policy has quarantined and released nothing yet.</p>';
  const rows = view.events
    .map(
      (event) => `<tr><td>${e(event.created_at.toISOString().slice(0, 16).replace('T', ' '))}</td>
<td><a href="/projects/${project.id}/tests/${e(event.test_case_id)}">${e(view.titles.get(event.test_case_id) ?? event.test_case_id)}</a></td>
<td>${e(environments.get(event.environment_id) ?? '?')}</td><td>${event.action}</td><td>${e(event.reason)}</td></tr>`,
    )
    .join('');
  return `<h2>Quarantine events</h2><div class="scroll"><table class="events"><thead><tr><th scope="col">When (UTC)</th><th scope="col">Test</th><th scope="col">Environment</th><th scope="col">Action</th><th scope="col">Reason</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

const MODE_TEXT = {
  off: 'off: nothing is quarantined by it',
  suggest: 'suggest: it shows what it would quarantine',
  auto: 'auto: it quarantines and releases',
};

export function flakyTestsPage(viewer: Viewer, project: Project, view: FlakyTestsView): string {
  const environments = new Map(view.environments.map((env) => [env.id, env.name]));
  const table =
    view.rows.length === 0
      ? emptyState(view)
      : `<div class="scroll"><table class="flaky"><thead><tr><th scope="col">Test</th><th scope="col">Environment</th><th scope="col">Class</th><th scope="col">Score</th><th scope="col">Flaky runs</th><th scope="col">Last flaky run</th><th scope="col">Trend</th><th scope="col">Quarantine</th></tr></thead>
<tbody>${view.rows.map((row) => testRow(project, row, view, environments)).join('')}</tbody></table></div>${
          view.total > view.rows.length ? `<p class="muted">The first ${view.rows.length} of ${view.total}: narrow the search to see the others.</p>` : ''
        }`;
  const { policy } = view;
  const body = `<h1>Flaky tests of ${e(project.name)}</h1>
<p class="muted">A test's score is the share of its counted runs of the last ${view.filter.days} days where it passed on a retry or flipped on the same commit. Quarantine policy: ${e(MODE_TEXT[policy.mode])} (threshold ${policy.threshold}, at most ${policy.cap_percent}% of an environment's tests, for ${policy.expiry_days} days or until ${policy.release_after_clean_runs} clean runs); <a href="/projects/${project.id}/settings#quarantine">change it in Settings</a>.</p>
${filters(view)}${table}${eventsSection(project, view, environments)}`;
  return layout({ title: `Flaky tests · ${project.name}`, viewer, project, body, script: true });
}
