import type { ComparedTest, Comparison } from '../comparisons/index.ts';
import type { ShiftMark } from '../durations/index.ts';
import type { Project } from '../projects/index.ts';
import { commitsCompareUrl, formatDuration } from '../runs/index.ts';
import { escapeXml as e } from '../xml.ts';
import { layout, stateBadge, type Viewer } from './layout.ts';

type RunReference = Comparison['run'];

const LISTS: { key: Exclude<keyof Comparison, 'run' | 'base' | 'duration_changes'>; heading: string; empty: string }[] = [
  { key: 'new_failures', heading: 'New failures', empty: 'No test fails here that did not fail there.' },
  { key: 'fixed', heading: 'Fixed', empty: 'No test that failed there passes here.' },
  { key: 'still_failing', heading: 'Still failing', empty: 'No test failed in both.' },
  { key: 'added', heading: 'Added tests', empty: 'No test is new here.' },
  { key: 'removed', heading: 'Removed tests', empty: 'Every test there ran here too.' },
  { key: 'flaky', heading: 'Flaky in either', empty: 'No test was flaky in either run.' },
];

function runLine(project: Project, label: string, run: RunReference): string {
  return `<li>${label}: <a href="/projects/${project.id}/runs/${run.id}">run #${run.number}</a> ${stateBadge(run.state)} <span class="muted">${e(run.environment_slug)}${run.branch ? ` · ${e(run.branch)}` : ''}${run.commit ? ` · <code>${e(run.commit.slice(0, 12))}</code>` : ''} · ${e(run.created_at.slice(0, 16).replace('T', ' '))}</span></li>`;
}

const status = (value: string | null) => (value === null ? '<span class="muted">not run</span>' : `<span class="tag ${e(value)}">${e(value)}</span>`);

function testCell(project: Project, test: ComparedTest): string {
  const where = [test.file_path, test.runner_project].filter(Boolean).map((part) => e(part));
  const failure = test.failure_group_title ?? test.error_message?.split('\n').find((line) => line.trim()) ?? null;
  return `<a href="/projects/${project.id}/tests/${e(test.test_case_id)}">${e(test.title)}</a><div class="muted">${where.join(' · ')}</div>${
    failure && test.status === 'failed' ? `<div class="failure">${e(failure)}</div>` : ''
  }`;
}

/** A test flagged slower in the run's environment: since which run, by how much. */
function slowerMark(project: Project, mark: ShiftMark | undefined): string {
  if (!mark) return '';
  const rise = Math.round(((mark.recent_ms - mark.baseline_ms) / Math.max(mark.baseline_ms, 1)) * 100);
  const since = mark.started_run_id
    ? `<a href="/projects/${project.id}/runs/${mark.started_run_id}">run #${mark.started_run_number}</a>`
    : `run #${mark.started_run_number}`;
  return `<div class="slower-mark"><span class="tag slower">slower</span> ${rise}% since ${since}</div>`;
}

function listSection(
  project: Project,
  heading: string,
  empty: string,
  list: Comparison['new_failures'],
  durations = false,
  slower: ReadonlyMap<string, ShiftMark> = new Map(),
): string {
  const id = heading.toLowerCase().replace(/\W+/g, '-');
  const head = `<h2 id="${id}">${e(heading)} (${list.total})</h2>`;
  if (list.total === 0) return `<section aria-labelledby="${id}" data-list="${id}">${head}<p class="muted">${e(empty)}</p></section>`;
  const rows = list.tests
    .map((test) => {
      const change = test.duration !== null && test.base_duration !== null ? test.duration - test.base_duration : null;
      const timing = durations
        ? `<td>${e(formatDuration(test.base_duration))}</td><td>${e(formatDuration(test.duration))}</td><td>${change === null ? '' : `${change > 0 ? '+' : '−'}${e(formatDuration(Math.abs(change)))}`}</td>`
        : `<td>${status(test.base_status)}</td><td>${status(test.status)}</td>`;
      return `<tr data-test="${e(test.test_case_id)}"><td>${testCell(project, test)}${slowerMark(project, slower.get(test.test_case_id))}</td>${timing}</tr>`;
    })
    .join('');
  const columns = durations
    ? '<th scope="col">Before</th><th scope="col">Now</th><th scope="col">Change</th>'
    : '<th scope="col">Before</th><th scope="col">Now</th>';
  const more = list.total > list.tests.length ? `<p class="muted">The first ${list.tests.length} of ${list.total}.</p>` : '';
  return `<section aria-labelledby="${id}" data-list="${id}">${head}<div class="scroll"><table><thead><tr><th scope="col">Test</th>${columns}</tr></thead><tbody>${rows}</tbody></table></div>${more}</section>`;
}

export function comparePage(viewer: Viewer, project: Project, comparison: Comparison, slower: ReadonlyMap<string, ShiftMark> = new Map()): string {
  const { run, base } = comparison;
  const commits = base.commit && run.commit && base.commit !== run.commit ? commitsCompareUrl(project.repo_url, base.commit, run.commit) : null;
  const body = `<h1>Run #${run.number} compared with run #${base.number}</h1>
<ul class="runs">${runLine(project, 'Now', run)}${runLine(project, 'Before', base)}</ul>
${commits ? `<p><a href="${e(commits)}" rel="noreferrer">The commits between them</a> on the repository's host</p>` : ''}
<nav aria-label="Lists" class="lists">${LISTS.map((list) => `<a href="#${list.heading.toLowerCase().replace(/\W+/g, '-')}">${e(list.heading)} (${comparison[list.key].total})</a>`).join(' · ')}</nav>
${LISTS.map((list) => listSection(project, list.heading, list.empty, comparison[list.key])).join('\n')}
${listSection(project, 'Duration changes', 'No test that passed in both took a different time.', comparison.duration_changes, true, slower)}`;
  return layout({ title: `Run #${run.number} against #${base.number} · ${project.name}`, viewer, project, body });
}
