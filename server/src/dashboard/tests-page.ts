import type { HistoryRow, TestCaseMetricsRow } from '../analytics/index.ts';
import type { BrokeWhen, GroupSeen, RunPoint } from '../comparisons/index.ts';
import { commitsCompareUrl } from '../runs/index.ts';
import type { FailureGroupRow } from '../failuregroups/index.ts';
import type { Project } from '../projects/index.ts';
import { escapeXml as e } from '../xml.ts';
import { dailyLine } from './charts.ts';
import { layout, type Viewer } from './layout.ts';

const OUTCOME_COLOURS: Record<string, string> = { passed: '#1a7f37', failed: '#cf222e', flaky: '#9a6700', skipped: '#8c959f' };

/** A test's outcomes, oldest to newest, as a strip of squares. */
export function historyStrip(history: HistoryRow[], size = 10): string {
  const ordered = [...history].reverse();
  const counts = Object.entries(ordered.reduce<Record<string, number>>((acc, row) => ({ ...acc, [row.outcome]: (acc[row.outcome] ?? 0) + 1 }), {}))
    .map(([outcome, n]) => `${n} ${outcome}`)
    .join(', ');
  const label = ordered.length === 0 ? 'No run in the window' : `Last ${ordered.length} runs, oldest first: ${counts}`;
  const rects = ordered
    .map(
      (row, i) =>
        `<rect x="${i * (size + 2)}" y="0" width="${size}" height="${size}" rx="2" fill="${OUTCOME_COLOURS[row.outcome] ?? '#8c959f'}"><title>run #${row.test_run_number}: ${e(row.outcome)}</title></rect>`,
    )
    .join('');
  const width = Math.max(1, ordered.length * (size + 2));
  return `<svg class="strip" role="img" aria-label="${e(label)}" width="${width}" height="${size}" viewBox="0 0 ${width} ${size}" xmlns="http://www.w3.org/2000/svg"><title>${e(label)}</title>${rects}</svg>`;
}

export interface TestsView {
  rows: TestCaseMetricsRow[];
  history: Map<string, HistoryRow[]>;
  filter: { search?: string; tag?: string; order_by: 'fail_rate' | 'flaky_rate' | 'duration' | 'last_run'; days: number };
}

const rate = (part: number, whole: number) => (whole === 0 ? '–' : `${((part / whole) * 100).toFixed(1)}%`);

export function testsPage(viewer: Viewer, project: Project, view: TestsView): string {
  const { filter } = view;
  const order = (value: string, label: string) => `<option value="${value}"${filter.order_by === value ? ' selected' : ''}>${label}</option>`;
  const form = `<form class="filters" method="get" role="search" aria-label="Find tests">
<label>Search<input name="search" value="${e(filter.search ?? '')}" placeholder="title or file"></label>
<label>Tag<input name="tag" value="${e(filter.tag ?? '')}" placeholder="@smoke"></label>
<label>Rank by<select name="order_by">${order('fail_rate', 'fail rate')}${order('flaky_rate', 'flaky rate')}${order('duration', 'mean duration')}${order('last_run', 'last run')}</select></label>
<label>Days<select name="days">${[7, 14, 30, 90].map((d) => `<option value="${d}"${d === filter.days ? ' selected' : ''}>${d}</option>`).join('')}</select></label>
<button type="submit">Find</button></form>`;
  const rows = view.rows
    .map(
      (row) => `<tr data-test="${e(row.test_case_id)}"><td><a href="/projects/${project.id}/tests/${e(row.test_case_id)}">${e(row.test_name)}</a>
<div class="muted">${e(row.file_path)} · ${e(row.project_name)}${row.tags.length > 0 ? ` · ${row.tags.map((tag) => e(tag)).join(' ')}` : ''}</div></td>
<td>${row.total_runs}</td><td>${rate(row.fail_count, row.total_runs)}</td><td>${rate(row.flaky_count, row.total_runs)}</td><td>${row.mean_duration === null ? '–' : `${row.mean_duration} ms`}</td><td>${historyStrip(view.history.get(row.test_case_id) ?? [])}</td></tr>`,
    )
    .join('');
  const table =
    view.rows.length === 0
      ? '<p class="empty">No test ran in this window with these filters.</p>'
      : `<table><thead><tr><th scope="col">Test</th><th scope="col">Runs</th><th scope="col">Fail rate</th><th scope="col">Flaky rate</th><th scope="col">Mean duration</th><th scope="col">Latest runs</th></tr></thead><tbody>${rows}</tbody></table>`;
  return layout({ title: `Tests · ${project.name}`, viewer, project, body: `<h1>Tests of ${e(project.name)}</h1>${form}${table}` });
}

export interface TestView {
  id: string;
  title: string;
  file: string;
  runnerProject: string;
  history: HistoryRow[];
  broke: BrokeWhen[];
  groupsSeen: GroupSeen[];
  groups: FailureGroupRow[];
  snoozes: { id: number; snooze_until: Date; description: string | null; source: string }[];
  now: Date;
}

const day = (at: Date) => at.toISOString().slice(0, 10);

function runAt(project: Project, point: RunPoint): string {
  return `<a href="/projects/${project.id}/runs/${point.test_run_id}">run #${point.test_run_number}</a>${point.commit ? ` (<code>${e(point.commit.slice(0, 12))}</code>)` : ''} on ${day(point.run_at)}`;
}

/** Per environment and branch: failing since when (and what it last passed on), or passing. */
function brokeSection(project: Project, broke: BrokeWhen[]): string {
  if (broke.length === 0) return '<p class="muted">No run has ended this test yet.</p>';
  const rows = broke
    .map((line) => {
      const where = `${e(line.environment_name)}${line.branch ? ` · ${e(line.branch)}` : ''}`;
      if (!line.first_failure)
        return `<tr data-line="${e(where)}"><td>${where}</td><td>passing: ${line.latest.outcome} in ${runAt(project, line.latest)}</td></tr>`;
      const since = `<strong>failing</strong> since ${runAt(project, line.first_failure)}, ${line.failed_runs} failed run${line.failed_runs === 1 ? '' : 's'}`;
      const lastPass = line.last_pass ? `; last passed in ${runAt(project, line.last_pass)}` : '; no pass in its history';
      const commits =
        line.last_pass?.commit && line.first_failure.commit && line.last_pass.commit !== line.first_failure.commit
          ? commitsCompareUrl(project.repo_url, line.last_pass.commit, line.first_failure.commit)
          : null;
      return `<tr data-line="${e(where)}"><td>${where}</td><td>${since}${lastPass}${commits ? ` · <a href="${e(commits)}" rel="noreferrer">what changed between them</a>` : ''}</td></tr>`;
    })
    .join('');
  return `<div class="scroll"><table class="broke"><thead><tr><th scope="col">Environment · branch</th><th scope="col">Now</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function groupsSeenSection(project: Project, seen: GroupSeen[]): string {
  if (seen.length === 0) return '<p class="muted">In no failure group.</p>';
  const items = seen
    .map(
      (g) =>
        `<li><a href="/projects/${project.id}/failure-groups/${encodeURIComponent(g.failure_group_id)}">${e(g.title)}</a> <span class="muted">${g.runs} failed run${g.runs === 1 ? '' : 's'}, from run #${g.first.test_run_number} (${day(g.first.run_at)}) to run #${g.last.test_run_number} (${day(g.last.run_at)})</span></li>`,
    )
    .join('');
  return `<ul class="groups-seen">${items}</ul>`;
}

export function testPage(viewer: Viewer, project: Project, view: TestView): string {
  const oldestFirst = [...view.history].reverse();
  const durations = dailyLine(
    `Duration of the last ${oldestFirst.length} runs, in ms, oldest first`,
    oldestFirst.map((row) => row.run_at.toISOString().slice(0, 10)),
    oldestFirst.map((row) => row.total_duration),
  );
  // Groups it is a member of that its recent runs did not fail in (older, or attached by hand).
  const shown = new Set(view.groupsSeen.map((g) => g.failure_group_id));
  const older = view.groups.filter((g) => !shown.has(g.id));
  const groups = `${groupsSeenSection(project, view.groupsSeen)}${
    older.length === 0
      ? ''
      : `<p class="muted">Also a member of: ${older.map((g) => `<a href="/projects/${project.id}/failure-groups/${encodeURIComponent(g.id)}">${e(g.title)}</a> (${e(g.status)})`).join(', ')}</p>`
  }`;
  const snoozes =
    view.snoozes.length === 0
      ? '<p class="muted">Never snoozed.</p>'
      : `<ul>${view.snoozes.map((s) => `<li>${s.snooze_until > view.now ? 'until' : 'ended'} ${e(s.snooze_until.toISOString().slice(0, 10))}${s.source === 'auto' ? ' (quarantine)' : ''}${s.description ? `: ${e(s.description)}` : ''}</li>`).join('')}</ul>`;
  const body = `<h1>${e(view.title)}</h1><p class="muted">${e(view.file)}${view.runnerProject ? ` · ${e(view.runnerProject)}` : ''} · <code>${e(view.id)}</code></p>
<h2>What broke and when</h2>${brokeSection(project, view.broke)}
<h2>Latest runs</h2>${historyStrip(view.history, 14)}
<h2>Duration</h2>${durations}
<h2>Failure groups over time</h2>${groups}
<h2>Snoozes</h2>${snoozes}`;
  return layout({ title: `${view.title} · ${project.name}`, viewer, project, body });
}
