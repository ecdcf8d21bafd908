import type { DailyRunRow, TestCaseMetricsRow } from '../analytics/index.ts';
import type { Project } from '../projects/index.ts';
import { escapeXml as e } from '../xml.ts';
import { barsWithRate, dailyLine } from './charts.ts';
import { STATE_COLOURS } from '../runs/index.ts';
import { layout, type Viewer } from './layout.ts';

export interface AnalyticsView {
  days: string[];
  windowDays: number;
  environmentId: number;
  environments: { id: number; name: string }[];
  runs: DailyRunRow[];
  testCounts: { day: string; test_count: number }[];
  flakiest: TestCaseMetricsRow[];
  failing: TestCaseMetricsRow[];
}

const rate = (part: number, whole: number) => (whole === 0 ? '–' : `${((part / whole) * 100).toFixed(1)}%`);

function ranking(caption: string, rows: TestCaseMetricsRow[], count: (row: TestCaseMetricsRow) => number): string {
  if (rows.length === 0) return `<h2>${e(caption)}</h2><p class="empty">None in this window.</p>`;
  const body = rows
    .map(
      (row) =>
        `<tr><td>${e(row.test_name)}<div class="muted">${e(row.file_path)} · ${e(row.project_name)}</div></td><td>${rate(count(row), row.total_runs)}</td><td>${count(row)} of ${row.total_runs}</td></tr>`,
    )
    .join('');
  return `<h2>${e(caption)}</h2><table><thead><tr><th scope="col">Test</th><th scope="col">Rate</th><th scope="col">Runs</th></tr></thead><tbody>${body}</tbody></table>`;
}

export function analyticsPage(viewer: Viewer, project: Project, view: AnalyticsView): string {
  const byDay = new Map(view.runs.map((row) => [row.day, row]));
  const counts = new Map(view.testCounts.map((row) => [row.day, row.test_count]));
  const bars = view.days.map((day) => {
    const row = byDay.get(day);
    return {
      day,
      parts: [
        { value: row?.passed_runs ?? 0, colour: STATE_COLOURS.passed as string, label: 'passed' },
        { value: row?.failed_runs ?? 0, colour: STATE_COLOURS.failed as string, label: 'failed' },
        { value: (row?.error_runs ?? 0) + (row?.cancelled_runs ?? 0), colour: '#8c959f', label: 'error or cancelled' },
      ],
      rate: row && row.total_tests > 0 ? (row.passed_tests / row.total_tests) * 100 : null,
    };
  });
  const totals = view.runs.reduce((sum, row) => ({ runs: sum.runs + row.run_count, passed: sum.passed + row.passed_runs }), { runs: 0, passed: 0 });
  const options = [{ id: 0, name: 'all environments' }, ...view.environments]
    .map((env) => `<option value="${env.id}"${env.id === view.environmentId ? ' selected' : ''}>${e(env.name)}</option>`)
    .join('');
  const filters = `<form class="filters" method="get" aria-label="Window">
<label>Environment<select name="environment_id">${options}</select></label>
<label>Days<select name="days">${[7, 14, 30, 90].map((d) => `<option value="${d}"${d === view.windowDays ? ' selected' : ''}>${d}</option>`).join('')}</select></label>
<button type="submit">Show</button></form>`;
  const body = `<h1>Analytics of ${e(project.name)}</h1>${filters}
<p>${totals.runs} runs, ${rate(totals.passed, totals.runs)} of them passed, over the last ${view.windowDays} days.</p>
<h2>Runs a day and the share of tests that passed</h2>
${barsWithRate(`Runs a day over ${view.windowDays} days (bars: passed, failed, other) and the daily pass rate of tests (line)`, bars)}
<h2>Tests run a day</h2>
${dailyLine(
  `Tests run a day over ${view.windowDays} days`,
  view.days,
  view.days.map((day) => counts.get(day) ?? null),
)}
${ranking('Flakiest tests', view.flakiest, (row) => row.flaky_count)}
${ranking('Most failing tests', view.failing, (row) => row.fail_count)}`;
  return layout({ title: `Analytics · ${project.name}`, viewer, project, body });
}
