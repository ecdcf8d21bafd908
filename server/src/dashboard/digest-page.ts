import { type Digest, DIGEST_PERIODS } from '../digests/index.ts';
import type { Project } from '../projects/index.ts';
import { formatDuration } from '../runs/index.ts';
import { escapeXml as e } from '../xml.ts';
import { TRACKER_NAMES } from './issue-section.ts';
import { layout, type Viewer } from './layout.ts';

// An environment's digest as a page: what the daily or weekly report says, each test a link to its
// page and each run where something turned a link to the run.

export interface DigestView {
  environments: { id: number; name: string }[];
  digest: Digest | null;
}

const PERIOD_LABELS: Record<Digest['period'], string> = { day: 'the last day', week: 'the last 7 days' };

const percent = (rate: number | null) => (rate === null ? '–' : `${Math.round(rate * 1000) / 10}%`);

function testLink(project: Project, test: { test_case_id: string; title: string; file_path: string }): string {
  return `<a href="/projects/${project.id}/tests/${e(test.test_case_id)}">${e(test.title)}</a>${test.file_path ? ` <span class="muted">${e(test.file_path)}</span>` : ''}`;
}

function runLink(project: Project, id: number | null, number: number): string {
  return id === null ? `run #${number}` : `<a href="/projects/${project.id}/runs/${id}">run #${number}</a>`;
}

function list<T>(heading: string, empty: string, items: T[], item: (value: T) => string): string {
  const id = `digest-${heading.toLowerCase().replace(/\W+/g, '-')}`;
  const content = items.length === 0 ? `<p class="muted">${e(empty)}</p>` : `<ul>${items.map((value) => `<li>${item(value)}</li>`).join('')}</ul>`;
  return `<section aria-labelledby="${id}"><h2 id="${id}">${e(heading)} (${items.length})</h2>${content}</section>`;
}

/** The project's open tracker issues (their count all of them): each subject a link to its page, each issue to the tracker's. */
function openIssuesList(project: Project, digest: Digest): string {
  const subject = (issue: Digest['open_issues'][number]) =>
    issue.subject_kind === 'test'
      ? `/projects/${project.id}/tests/${e(issue.subject_id)}`
      : `/projects/${project.id}/failure-groups/${e(encodeURIComponent(issue.subject_id))}`;
  const item = (issue: Digest['open_issues'][number]) => {
    const name = `${TRACKER_NAMES[issue.tracker]} ${issue.tracker === 'github' || issue.tracker === 'gitlab' ? '#' : ''}${e(issue.issue_key)}`;
    return `<li><a href="${subject(issue)}">${e(issue.title)}</a>: open, ${issue.issue_url ? `<a href="${e(issue.issue_url)}">${name}</a>` : name}</li>`;
  };
  const shown = digest.open_issues.length;
  const content =
    shown === 0
      ? '<p class="muted">No tracker issue of the project is open.</p>'
      : `<ul>${digest.open_issues.map(item).join('')}</ul>${digest.open_issues_total > shown ? `<p class="muted">and ${digest.open_issues_total - shown} more</p>` : ''}`;
  return `<section aria-labelledby="digest-open-issues"><h2 id="digest-open-issues">Open issues (${digest.open_issues_total})</h2>${content}</section>`;
}

function filters(view: DigestView): string {
  const option = (value: string | number, label: string, selected: boolean) => `<option value="${value}"${selected ? ' selected' : ''}>${e(label)}</option>`;
  return `<form class="filters" method="get" aria-label="Digest">
<label>Environment<select name="environment_id">${view.environments.map((env) => option(env.id, env.name, env.id === view.digest?.environment_id)).join('')}</select></label>
<label>Period<select name="period">${DIGEST_PERIODS.map((period) => option(period, PERIOD_LABELS[period], period === view.digest?.period)).join('')}</select></label>
<button type="submit">Show</button></form>`;
}

export function digestPage(viewer: Viewer, project: Project, view: DigestView): string {
  const { digest } = view;
  if (!digest) {
    const body = `<h1>Digest of ${e(project.name)}</h1><p class="empty">No environment yet: a digest tells what an environment's runs brought in a day or a week.</p>`;
    return layout({ title: `Digest · ${project.name}`, viewer, project, body });
  }
  const { runs } = digest;
  const change =
    runs.pass_rate !== null && runs.previous.pass_rate !== null
      ? ` (${runs.pass_rate >= runs.previous.pass_rate ? '+' : '−'}${Math.round(Math.abs(runs.pass_rate - runs.previous.pass_rate) * 1000) / 10} points)`
      : '';
  const body = `<h1>Digest of ${e(project.name)}</h1>${filters(view)}
<p>${e(digest.environment_name)}, ${e(PERIOD_LABELS[digest.period])} (${e(digest.from)} to ${e(digest.to)}, UTC): <strong>${runs.runs} runs, ${percent(runs.pass_rate)} passed</strong>${change}; the period before: ${runs.previous.runs} runs, ${percent(runs.previous.pass_rate)} passed.</p>
${list('Turned broken', 'No test broke in this period.', digest.turned_broken, (t) => `${testLink(project, t)}: failing since ${runLink(project, t.run_id, t.run_number)}`)}
${list('Turned flaky', 'No test turned flaky in this period.', digest.turned_flaky, (t) => `${testLink(project, t)}: first flaky in ${runLink(project, t.run_id, t.run_number)}`)}
${list('Got slower', 'No test got slower and stayed so.', digest.slower, (t) => `${testLink(project, t)}: ${e(formatDuration(t.recent_ms))}, was ${e(formatDuration(t.baseline_ms))}, since ${runLink(project, t.started_run_id, t.started_run_number)}`)}
${list('Flakiest', 'No test is flaky over the last 14 days.', digest.flakiest, (t) => `${testLink(project, t)}: flaky in ${t.flaky_runs} of ${t.runs_counted} runs`)}
${list('Most failing', 'No test failed in this period.', digest.most_failing, (t) => `${testLink(project, t)}: failed in ${t.fail_count} of ${t.runs} runs`)}
${list('Slowest', 'No test ran in this period.', digest.slowest, (t) => `${testLink(project, t)}: ${e(formatDuration(t.mean_duration))} on average over ${t.runs} runs`)}
${openIssuesList(project, digest)}`;
  return layout({ title: `Digest · ${digest.environment_name} · ${project.name}`, viewer, project, body });
}
