import { escapeXml as e, isWebUrl } from '../xml.ts';
import type { Project } from '../projects/index.ts';
import { showsInline, traceViewerLink, type AttachmentView } from '../artifacts/index.ts';
import type { SummaryDetail } from './schema.ts';
import type { RunPageDetails } from './details.ts';
import { branchNote, shownBranch } from './branch.ts';
import { repositoryUrl } from './repository.ts';
import type { ProjectCount, RunRow } from './store.ts';
import { describeSelection } from '../selection/index.ts';

/** A run state's colour, wherever a run is shown. */
export const STATE_COLOURS: Record<string, string> = {
  passed: '#1a7f37',
  failed: '#cf222e',
  error: '#9a6700',
  cancelled: '#57606a',
  running: '#0969da',
  queued: '#0969da',
  pending: '#0969da',
};

/** The build's URL: a link when it is http(s), else text (a `javascript:` link would run on a click). */
/** The branch the run is for (the CI's), and the test repository's when another ran. */
function branchOf(run: RunRow): string {
  const branch = shownBranch(run);
  return branch ? ` · branch <strong class="branch">${e(branch)}</strong>` : '';
}

/** Why the tests ran from another branch than the run's, when they did. */
function noteOnBranch(run: RunRow): string {
  const note = branchNote(run);
  return note ? `<p class="note branch-note">${e(note)}</p>` : '';
}

/** How the server handed the run's units out (issue 56); nothing where Playwright chose the order. */
function orderOf(run: RunRow): string {
  if (run.order_strategy === null) return '';
  const label = run.order_strategy === 'failures-first' ? 'likely failures first' : 'longest first';
  return ` · order <strong class="order-strategy" data-order-strategy="${e(run.order_strategy)}">${label}</strong>`;
}

/** The CI job that asked for the run. */
function ciJobLink(url: string | null): string {
  return url && isWebUrl(url) ? ` · <a class="ci-job" href="${e(url)}" rel="noreferrer">CI job</a>` : '';
}

function buildLink(url: string | null): string {
  if (!url) return '';
  return isWebUrl(url) ? ` · build <a href="${e(url)}" rel="noreferrer">${e(url)}</a>` : ` · build ${e(url)}`;
}

/**
 * The pull or merge request a run's build was for: linked on the repository's host when the
 * project's repository is an https URL on GitHub, GitLab or Bitbucket, named as that host names it.
 */
function pullRequestLink(repoUrl: string | null, number: number | null): string {
  if (number === null) return '';
  const url = repositoryUrl(repoUrl);
  const host = url?.hostname ?? '';
  const [label, path] = host.includes('gitlab')
    ? [`merge request !${number}`, `/-/merge_requests/${number}`]
    : host === 'bitbucket.org'
      ? [`pull request #${number}`, `/pull-requests/${number}`]
      : [`pull request #${number}`, host === 'github.com' || host.startsWith('github.') ? `/pull/${number}` : null];
  return url && path ? ` · <a href="${e(`${url.origin}${url.pathname.replace(/\/$/, '')}${path}`)}" rel="noreferrer">${e(label)}</a>` : ` · ${e(label)}`;
}

export function formatDuration(ms: number | null): string {
  if (ms === null) return '–';
  if (ms < 1000) return `${ms} ms`;
  const seconds = ms / 1000;
  return seconds < 60 ? `${seconds.toFixed(1)} s` : `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

/** The path and query of a signed URL: the page links on its own origin, whatever PUBLIC_URL says. */
function local(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

function isTrace(attachment: AttachmentView): boolean {
  return attachment.name === 'trace' || (attachment.content_type === 'application/zip' && attachment.name.startsWith('trace'));
}

/** One attachment: a screenshot inline, a video playable, a trace one click from the viewer, another file to download. */
function attachmentItem(a: AttachmentView): string {
  const url = local(a.url);
  const label = `${a.name} (retry ${a.retry})`;
  // A tab of its own: the viewer is a page of its own, and the run page stays where the person was.
  if (isTrace(a)) return `<li><a class="trace" href="${e(traceViewerLink(url))}" target="_blank" rel="noopener">Open trace</a></li>`;
  if (showsInline(a.content_type) && a.content_type.startsWith('image/')) {
    return `<li><figure><a href="${e(url)}"><img src="${e(url)}" alt="${e(label)}" loading="lazy"></a><figcaption>${e(a.name)}</figcaption></figure></li>`;
  }
  if (showsInline(a.content_type))
    return `<li><figure><video controls preload="metadata" src="${e(url)}"></video><figcaption>${e(a.name)}</figcaption></figure></li>`;
  return `<li><a href="${e(url)}" title="${e(label)}">${e(a.name)}</a></li>`;
}

/**
 * A failure's attachments, a block per try (first try first): a try's trace sits with that try's
 * screenshot and video, never beside another's.
 */
function attachmentsBlock(attachments: AttachmentView[]): string {
  if (attachments.length === 0) return '';
  const byRetry = new Map<number, AttachmentView[]>();
  for (const a of attachments) byRetry.set(a.retry, [...(byRetry.get(a.retry) ?? []), a]);
  const tries = [...byRetry.entries()]
    .sort(([a], [b]) => a - b)
    .map(
      ([retry, items]) =>
        `<section class="try" data-retry="${retry}"><h3>${retry === 0 ? 'First try' : `Retry ${retry}`}</h3><ul class="attachments">${items.map(attachmentItem).join('')}</ul></section>`,
    );
  return `<div class="tries">${tries.join('')}</div>`;
}

/** A failure group as people name it: its title, or its id until the group is made. */
function groupName(t: Pick<SummaryDetail, 'failure_group_id' | 'failure_group_title'>): string {
  return t.failure_group_title ?? t.failure_group_id ?? '';
}

/** Whether a failure is new since the previous run of the environment and branch, or was there too. */
function sincePrevious(t: SummaryDetail, previous: RunPageDetails['previous']): string {
  if (t.status !== 'failed' || !previous) return '';
  return previous.failed.has(t.test_case_id)
    ? ` <span class="tag still" title="also failed in run #${previous.number}">still failing</span>`
    : ` <span class="tag new" title="passed or did not run in run #${previous.number}">new</span>`;
}

function testRow(t: SummaryDetail, actions: ReportActions, previous: RunPageDetails['previous'] = null): string {
  const group = t.failure_group_id
    ? `<a href="${e(actions.groupLink ? actions.groupLink(t.failure_group_id) : `#group-${t.failure_group_id}`)}">${e(groupName(t))}</a>`
    : '';
  const action = actions.test;
  const snoozed = t.snoozed ? ' <span class="tag snoozed">snoozed</span>' : '';
  const kind =
    t.failure_category && t.failure_category !== 'unknown' ? ` <span class="tag kind" title="the kind of failure">${e(t.failure_category)}</span>` : '';
  const error = t.error_message ? `<pre class="error" tabindex="0">${e(t.error_message)}</pre>` : '';
  const owners = t.owners.length > 0 ? `<div class="owners">Owners: ${t.owners.map((owner) => e(owner)).join(' ')}</div>` : '';
  const skipped = t.status === 'skipped' && t.skip_reason ? `<div class="skip-reason">Skipped: ${e(t.skip_reason)}</div>` : '';
  const attachments = t.status === 'failed' || t.status === 'flaky' ? attachmentsBlock(t.attachments) : '';
  return `<tr class="${e(t.status)}" data-test="${e(t.test_case_id)}"><td class="status"><span class="tag ${e(t.status)}">${e(t.status)}</span>${sincePrevious(t, previous)}${kind}${snoozed}</td>
<td class="test"><strong>${e(t.title)}</strong><div class="file">${e(t.file_path)}${t.runner_project ? ` · ${e(t.runner_project)}` : ''}</div>${owners}${skipped}${error}${attachments}${action ? action(t) : ''}</td>
<td class="duration" data-label="Duration">${e(formatDuration(t.duration))}</td><td class="retries" data-label="Retries">${t.retries}</td><td class="group" data-label="Failure group">${group}</td></tr>`;
}

function section(title: string, tests: SummaryDetail[], actions: ReportActions = {}, previous: RunPageDetails['previous'] = null): string {
  if (tests.length === 0) return '';
  // A live run's page adds rows to the section its results belong to (dashboard/client/live.ts).
  return `<h2>${e(title)} (${tests.length})</h2>
<table class="tests" data-section="${e(title)}"><thead><tr><th scope="col">Status</th><th scope="col">Test</th><th scope="col">Duration</th><th scope="col">Retries</th><th scope="col">Failure group</th></tr></thead>
<tbody>${tests.map((t) => testRow(t, actions, previous)).join('\n')}</tbody></table>`;
}

/** The counts by runner project; nothing for a suite without runner projects (Playwright's unnamed one). */
function projectBreakdown(counts: ProjectCount[]): string {
  if (counts.every((row) => row.runner_project === '')) return '';
  const byProject = new Map<string, Record<string, number>>();
  for (const row of counts) {
    const tally = byProject.get(row.runner_project) ?? { passed: 0, failed: 0, flaky: 0, skipped: 0 };
    tally[row.status] = (tally[row.status] ?? 0) + row.count;
    byProject.set(row.runner_project, tally);
  }
  const rows = [...byProject.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, c]) => `<tr><td>${e(name)}</td><td>${c.passed}</td><td>${c.failed}</td><td>${c.flaky}</td><td>${c.skipped}</td></tr>`);
  return `<h2>By runner project</h2><table class="breakdown"><thead><tr><th scope="col">Project</th><th scope="col">Passed</th><th scope="col">Failed</th><th scope="col">Flaky</th><th scope="col">Skipped</th></tr></thead>
<tbody>${rows.join('')}</tbody></table>`;
}

function failureGroups(tests: SummaryDetail[]): string {
  const groups = new Map<string, SummaryDetail[]>();
  for (const t of tests) if (t.failure_group_id) groups.set(t.failure_group_id, [...(groups.get(t.failure_group_id) ?? []), t]);
  if (groups.size === 0) return '';
  const items = [...groups.entries()].map(
    ([id, members]) =>
      `<li id="group-${e(id)}"><strong>${e(groupName(members[0] as SummaryDetail))}</strong>: ${members.map((m) => `${e(m.title)}${m.runner_project ? ` (${e(m.runner_project)})` : ''}`).join(', ')}</li>`,
  );
  return `<h2>Failure groups (${groups.size})</h2><ul class="groups">${items.join('')}</ul>`;
}

/** The run report's styles, for a page of its own or the dashboard's. */
export const RUN_REPORT_STYLE = `
.meta{color:#57606a;margin-bottom:1rem} .counts{display:flex;gap:.75rem;flex-wrap:wrap;margin:1rem 0}
.count{border:1px solid #d0d7de;border-radius:6px;padding:.5rem 1rem;min-width:5rem} .count b{display:block;font-size:1.4rem}
table{border-collapse:collapse;width:100%;margin-bottom:1.5rem} th,td{border-bottom:1px solid #d0d7de;padding:.4rem;text-align:left;vertical-align:top}
.tag{border-radius:4px;padding:0 .35rem;font-size:.8rem;color:#fff} .tag.passed{background:#1a7f37} .tag.failed{background:#cf222e}
.tag.flaky{background:#9a6700} .tag.skipped{background:#6e7781} .tag.snoozed{background:#6639ba} .tag.new{background:#bf3989} .tag.still{background:#57606a} .tag.kind{background:#fff;color:#1f2328;border:1px solid #8c959f}
.file{color:#57606a;font-size:.85rem} section.try h3{font-size:.85rem;margin:.5rem 0 .25rem;color:#57606a} ul.attachments{list-style:none;padding:0;margin:0;display:flex;flex-wrap:wrap;gap:.75rem;align-items:flex-start} ul.attachments figure{margin:0} ul.attachments img,ul.attachments video{max-width:24rem;max-height:16rem;border:1px solid #d0d7de} figcaption{color:#57606a;font-size:.8rem} pre.error{background:#fff1f0;border-left:3px solid #cf222e;padding:.5rem;white-space:pre-wrap;overflow-wrap:anywhere;max-height:20rem;overflow:auto}
pre.reason{background:#fff8c5;padding:.5rem;white-space:pre-wrap;overflow-wrap:anywhere} p.notice{background:#ddf4ff;border-left:3px solid #0969da;padding:.5rem}
.meta,td{overflow-wrap:anywhere} .state{background:#57606a} ${Object.entries(STATE_COLOURS)
  .map(([state, colour]) => `.state-${state}{background:${colour}}`)
  .join(' ')} .skip-reason{color:#57606a;font-style:italic} ul.attachments img,ul.attachments video{max-width:100%}
@media (max-width:700px){table{display:block;overflow-x:auto}}`;

/** What a page adds to the report: actions on the run, and on each failed or flaky test. */
export interface ReportActions {
  run?: string;
  test?: (test: SummaryDetail) => string;
  /** Where a failure group opens; by default, its entry further down the page. */
  groupLink?: (groupId: string) => string;
  /** The page with every test, when some are left out. */
  showAll?: string;
  /** Where this run is compared with another (the previous of its environment and branch). */
  compareLink?: (otherRunId: number) => string;
}

/** Why a run shows its counts and no tests, or that it is kept whatever the policy. */
function retentionNote(run: RunRow): string {
  if (run.details_deleted_at) {
    return `<p class="notice" data-retention="deleted">The retention policy deleted this run's results and attachments on ${e(run.details_deleted_at.toISOString().slice(0, 10))}; its counts and its place in the analytics stay.</p>`;
  }
  return run.pinned ? '<p class="notice" data-retention="pinned">Pinned: this run keeps its results and attachments whatever the retention policy.</p>' : '';
}

/** The run as a person reads it: counts, failures first with their error text, flaky, snoozed, per project. */
export function runReport(project: Project, run: RunRow, details: RunPageDetails, actions: ReportActions = {}): string {
  const { tests } = details;
  const failed = tests.filter((t) => t.status === 'failed');
  const flaky = tests.filter((t) => t.status === 'flaky');
  const others = tests.filter((t) => t.status === 'passed' || t.status === 'skipped');
  const counts: [string, number][] = [
    ['Total', run.total_count],
    ['Passed', run.success_count],
    ['Failed', run.failed_count],
    ['Flaky', run.flaky_count],
    ['Skipped', run.skipped_count],
    ['Snoozed', run.snoozed_count],
  ];
  const reason = run.error_reason ?? run.cancel_reason;
  return `<h1>Run #${run.number} <span class="state state-${e(run.state)}">${e(run.state)}</span></h1>
<div class="meta">${e(project.name)} (${e(project.repo_name)}) · environment <strong>${e(run.environment_name)}</strong> (${e(run.environment_slug)})
${branchOf(run)}${run.test_run_head_sha ? ` · commit ${e(run.test_run_head_sha.slice(0, 12))}` : ''}
${pullRequestLink(project.repo_url, run.pull_request)} · duration ${e(formatDuration(run.duration))}${orderOf(run)}${buildLink(run.build_url)}${ciJobLink(run.ci_build_url)}</div>
${noteOnBranch(run)}
${actions.run ?? ''}
${details.previous && actions.compareLink ? `<p class="compare"><a href="${e(actions.compareLink(details.previous.id))}">Compare with run #${details.previous.number}</a> <span class="muted">(the previous of this environment and branch)</span></p>` : ''}
${retentionNote(run)}
${run.selection ? `<p class="notice" data-selection="${e(run.selection.mode)}">${e(describeSelection(run.selection))}</p>` : ''}
${reason ? `<pre class="reason">${e(reason)}</pre>` : ''}
<div class="counts">${counts.map(([label, n]) => `<div class="count" data-count="${e(label.toLowerCase())}"><b>${n}</b>${e(label)}</div>`).join('')}</div>
${section('Failed', failed, actions, details.previous)}
${section('Flaky', flaky, actions)}
${failureGroups(tests)}
${projectBreakdown(details.breakdown)}
${section('Passed and skipped', others, { groupLink: actions.groupLink })}
${details.hidden > 0 && actions.showAll ? `<p class="more">and ${details.hidden} more passed or skipped tests: <a href="${e(actions.showAll)}">show every test</a></p>` : ''}`;
}

/** The run page of its signed link (summary_url): the report alone. */
export function renderRunPage(project: Project, run: RunRow, details: RunPageDetails, showAll: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" type="image/svg+xml" href="/favicon.svg"><title>Run #${run.number} ${e(run.state)} · ${e(project.name)} · ${e(run.environment_name)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1100px;padding:0 1rem;color:#1f2328}
h1{font-size:1.5rem;margin:0 0 .25rem} .state{color:#fff;border-radius:1rem;padding:.1rem .7rem;font-size:1rem}
${RUN_REPORT_STYLE}
</style></head><body>
${runReport(project, run, details, { showAll })}
</body></html>`;
}
