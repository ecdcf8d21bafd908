import type { FailureCategory } from '../failuregroups/index.ts';
import type { Project } from '../projects/index.ts';
import { type RunPageDetails, type RunRow, runReport, type RunTimeline, type SummaryDetail } from '../runs/index.ts';
import { escapeXml as e } from '../xml.ts';
import { apiForm, foldedForm } from './forms.ts';
import { layout, type Viewer } from './layout.ts';
import { visualSummary } from './visual-page.ts';
import { runTimelineSection } from './run-timeline.ts';
import type { VisualChanges } from '../visual/index.ts';

const UNDER_WAY = new Set(['pending', 'queued', 'running']);

function runActions(run: RunRow): string {
  const forms: string[] = [];
  if (UNDER_WAY.has(run.state)) {
    forms.push(
      apiForm(`POST /api/test-runs/${run.id}/cancel`, 'reload', 'Cancel run', '<input type="hidden" name="reason" value="cancelled from the dashboard">'),
    );
  } else {
    const rerun = (onlyFailed: boolean) =>
      `<input type="hidden" name="environment" value="${e(run.environment_slug)}"><input type="hidden" name="rerun_source_id" data-type="number" value="${run.id}">${
        onlyFailed ? '<input type="hidden" name="rerun_only_failed" data-type="bool" value="true">' : ''
      }`;
    forms.push(apiForm('PUT /api/test-runs', 'open-run', 'Rerun', rerun(false)));
    if (run.failed_count > 0 && !run.details_deleted_at) forms.push(apiForm('PUT /api/test-runs', 'open-run', 'Rerun failed tests', rerun(true)));
  }
  if (!run.details_deleted_at) {
    forms.push(
      run.pinned
        ? apiForm(`DELETE /api/test-runs/${run.id}/pin`, 'reload', 'Unpin')
        : apiForm(`POST /api/test-runs/${run.id}/pin`, 'reload', 'Pin (keep whatever the retention policy)'),
    );
  }
  return `<div class="actions">${forms.join('')}</div>`;
}

/** Snooze a failed test: until a date, here or in every environment, with a reason. */
function snoozeForm(run: RunRow, test: SummaryDetail, today: string): string {
  if (test.status !== 'failed' || test.snoozed) return '';
  const id = `snooze-${run.id}-${test.test_case_id}`;
  const fields = `<input type="hidden" name="test_ids" data-type="list" value="${e(test.test_case_id)}">
<input type="hidden" name="created_from_test_run_id" data-type="number" value="${run.id}">
<label for="${id}-until">Until<input id="${id}-until" type="date" name="snooze_until" data-type="end-of-day" min="${today}" required></label>
<label for="${id}-where">Where<select id="${id}-where" name="scoped_to_environment_id" data-type="number" data-optional><option value="${run.environment_id}">${e(run.environment_name)} only</option><option value="">every environment</option></select></label>
<label for="${id}-why">Reason<input id="${id}-why" name="description" maxlength="5000" data-optional></label>`;
  return foldedForm('snooze', 'Snooze', apiForm('POST /api/snoozes', 'reload', 'Snooze this test', fields));
}

/** The kinds of the run's failures, each a link that shows its failures alone. */
function kindFilter(run: RunRow, project: Project, details: RunPageDetails, shown: FailureCategory | null): string {
  const counts = new Map<FailureCategory, number>();
  for (const test of details.tests)
    if (test.failure_category && test.failure_category !== 'unknown') counts.set(test.failure_category, (counts.get(test.failure_category) ?? 0) + 1);
  if (counts.size === 0) return '';
  const base = `/projects/${project.id}/runs/${run.id}`;
  const links = [...counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, n]) => (kind === shown ? `<strong aria-current="page">${kind} (${n})</strong>` : `<a href="${base}?category=${kind}">${kind} (${n})</a>`));
  const all = shown ? `<a href="${base}">every kind</a>` : '<strong aria-current="page">every kind</strong>';
  return `<nav aria-label="Failures by kind" class="kinds">Failures by kind: ${[all, ...links].join(' · ')}</nav>`;
}

/** The owners of the run's failed and flaky tests, each a link that shows their failures alone. */
function ownerFilter(run: RunRow, project: Project, details: RunPageDetails, shown: string | null): string {
  const counts = new Map<string, number>();
  for (const test of details.tests)
    if (test.status === 'failed' || test.status === 'flaky') for (const owner of test.owners) counts.set(owner, (counts.get(owner) ?? 0) + 1);
  if (counts.size === 0) return '';
  const base = `/projects/${project.id}/runs/${run.id}`;
  const links = [...counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([owner, n]) =>
      owner === shown
        ? `<strong aria-current="page">${e(owner)} (${n})</strong>`
        : `<a href="${e(`${base}?owner=${encodeURIComponent(owner)}`)}">${e(owner)} (${n})</a>`,
    );
  const all = shown ? `<a href="${base}">every owner</a>` : '<strong aria-current="page">every owner</strong>';
  return `<nav aria-label="Failures by owner" class="kinds">Failures by owner: ${[all, ...links].join(' · ')}</nav>`;
}

export function runPage(
  viewer: Viewer,
  project: Project,
  run: RunRow,
  details: RunPageDetails,
  now: Date,
  kind: FailureCategory | null = null,
  owner: string | null = null,
  visual: VisualChanges['counts'] | null = null,
  timeline: RunTimeline | null = null,
  /** A run under way: the position its stream starts from (the page's results). */
  livePosition: string | null = null,
): string {
  const today = now.toISOString().slice(0, 10);
  // Visual changes are counted apart from the failures, with a link to review them.
  const visualLine = visual && visualSummary(visual);
  const visualLink = visualLine ? `<p class="visual-summary"><a href="/projects/${project.id}/runs/${run.id}/visual">${e(visualLine)}</a></p>` : '';
  const filter = `${kindFilter(run, project, details, kind)}${ownerFilter(run, project, details, owner)}`;
  // A kind or an owner shows its failed and flaky tests alone; the others stay as they are.
  const failing = (test: SummaryDetail) => test.status === 'failed' || test.status === 'flaky';
  const shown =
    kind || owner
      ? {
          ...details,
          tests: details.tests.filter((test) => !failing(test) || ((!kind || test.failure_category === kind) && (!owner || test.owners.includes(owner)))),
        }
      : details;
  const report = runReport(project, run, shown, {
    showAll: `/projects/${project.id}/runs/${run.id}?all=1`,
    run: `${runActions(run)}${visualLink}${filter}`,
    test: (test) => snoozeForm(run, test, today),
    groupLink: (groupId) => `/projects/${project.id}/failure-groups/${encodeURIComponent(groupId)}`,
    compareLink: (otherId) => `/projects/${project.id}/runs/${run.id}/compare/${otherId}`,
  });
  // A run under way streams its results into the page (dashboard/client/live.ts): rows, counts and
  // progress in place; when it ends, the report (data-run-report) is read again and put in place.
  const live = UNDER_WAY.has(run.state)
    ? ` data-live-run="${run.id}" data-live-events="/projects/${project.id}/runs/${run.id}/events" data-live-from="${e(livePosition ?? '')}" data-group-base="/projects/${project.id}/failure-groups/"`
    : '';
  const progress = UNDER_WAY.has(run.state)
    ? '<p class="live-progress" data-live-progress role="status" aria-live="polite">Under way: results show here as they are stored.</p>'
    : '';
  const body = `<div data-run-report="${run.id}" data-state="${e(run.state)}"${live}>${progress}${report}</div>${runTimelineSection(project, timeline)}`;
  return layout({ title: `Run #${run.number} · ${project.name}`, viewer, project, body, script: true });
}
