import type { Project } from '../projects/index.ts';
import type { RunRow } from '../runs/index.ts';
import type { BaselineCommit, VisualChange, VisualChanges } from '../visual/index.ts';
import { escapeXml as e } from '../xml.ts';
import { apiForm } from './forms.ts';
import { layout, type Viewer } from './layout.ts';
import { mayCall } from './permissions.ts';
import { visualSummary } from './visual-summary.ts';

export { visualSummary };

// A run's visual changes to review: each with its baseline and new image side by side, as an
// overlay with a slider, and as the diff, the changed areas boxed; approve or reject each or all.
// The images load lazily; the page's script (client/visual.ts) draws the boxes, the slider, the zoom
// and the keys (j/k or arrows: next, previous; a: approve; r: reject).

function share(change: VisualChange): string {
  const c = change.comparison;
  if (c.status === 'computing') return 'Comparing the images…';
  if (c.status === 'failed') return `Not compared: ${c.error ?? 'unknown'}`;
  const percent = ((c.changed_ratio ?? 0) * 100).toFixed(2);
  const areas = `${c.boxes.length} changed area${c.boxes.length === 1 ? '' : 's'}`;
  const size = c.size_changed ? ' · the size changed' : '';
  return `${percent}% of pixels changed (${c.changed_pixels ?? 0} of ${c.width ?? 0}×${c.height ?? 0}) · ${areas}${size} · threshold ${c.threshold}`;
}

function reviewLine(change: VisualChange): string {
  if (change.review === 'pending') return 'Awaiting review';
  const when = change.reviewed_at ? ` on ${change.reviewed_at.slice(0, 16).replace('T', ' ')} UTC` : '';
  return `${change.review === 'approved' ? 'Approved' : 'Rejected'} by ${change.reviewed_by ?? 'someone'}${when}`;
}

function boxes(change: VisualChange): string {
  const { width, height } = change.comparison;
  if (!width || !height) return '';
  return change.comparison.boxes.map((b) => `<span class="change-box" data-box="${b.x},${b.y},${b.width},${b.height}"></span>`).join('');
}

function frame(kind: string, url: string, alt: string, change: VisualChange, withBoxes: boolean): string {
  return `<div class="frame frame-${kind}"><img src="${e(url)}" alt="${e(alt)}" loading="lazy" decoding="async">${withBoxes ? boxes(change) : ''}</div>`;
}

const VERDICT_LABEL = { flaky: 'Flaky', noise: 'Noise' } as const;

function changeItem(change: VisualChange, index: number, mayReview: boolean): string {
  const id = `change-${change.id}`;
  // A flaky or noisy screenshot is not offered as a baseline: no approve (nor reject) to press.
  const reviewable = mayReview && change.verdict === 'change';
  const verdict =
    change.verdict === 'change'
      ? ''
      : `<p class="visual-verdict" data-verdict="${change.verdict}"><strong>${VERDICT_LABEL[change.verdict]}</strong>: ${e(change.verdict_reason ?? '')}. Not offered as a baseline.</p>`;
  const name = change.title ?? change.test_id;
  const where = [change.file_path, change.runner_project, change.retry > 0 ? `retry ${change.retry}` : ''].filter(Boolean).join(' · ');
  const view = (key: string, label: string, pressed: boolean) => `<button type="button" data-view-button="${key}" aria-pressed="${pressed}">${label}</button>`;
  const { width, height } = change.comparison;
  const sizeData = width && height ? ` data-width="${width}" data-height="${height}"` : '';
  const actions = reviewable
    ? `<button type="button" data-review="approved">Approve <kbd>a</kbd></button><button type="button" data-review="rejected">Reject <kbd>r</kbd></button>`
    : '';
  return `<li class="visual-change" id="${id}" data-change="${change.id}" data-state="${change.review}" data-verdict="${change.verdict}" tabindex="-1" aria-labelledby="${id}-title"${sizeData}>
<h2 id="${id}-title"><span class="muted">${index + 1}.</span> ${e(name)} <code>${e(change.snapshot_name)}</code></h2>
${where ? `<p class="muted">${e(where)}</p>` : ''}${verdict}<p class="visual-share">${e(share(change))}</p>
<div class="visual-tools"><div role="group" aria-label="View of ${e(change.snapshot_name)}">${view('side', 'Side by side', true)}${view('overlay', 'Overlay', false)}${view('diff', 'Diff', false)}</div>
<label for="${id}-zoom">Zoom<select id="${id}-zoom" data-zoom><option value="fit">fit</option><option value="1">100%</option><option value="2">200%</option><option value="4">400%</option></select></label></div>
<div class="visual-view" data-view="side"><figure><figcaption>Baseline</figcaption>${frame('expected', change.expected_url, `Baseline of ${change.snapshot_name}`, change, true)}</figure>
<figure><figcaption>New</figcaption>${frame('actual', change.actual_url, `New ${change.snapshot_name}`, change, true)}</figure></div>
<div class="visual-view" data-view="overlay" hidden><figure><figcaption>Baseline left of the slider, new right of it</figcaption><div class="frame frame-overlay"><img src="${e(change.expected_url)}" alt="Baseline of ${e(change.snapshot_name)}" loading="lazy" decoding="async"><img class="overlay-new" src="${e(change.actual_url)}" alt="New ${e(change.snapshot_name)}" loading="lazy" decoding="async">${boxes(change)}</div></figure>
<label for="${id}-slider">Slider<input id="${id}-slider" type="range" min="0" max="100" value="50" data-slider></label></div>
<div class="visual-view" data-view="diff" hidden><figure><figcaption>Diff</figcaption>${
    change.diff_url ? frame('diff', change.diff_url, `Diff of ${change.snapshot_name}`, change, true) : '<p class="muted">No diff image: the sizes differ.</p>'
  }</figure></div>
<div class="visual-review"><p class="review-state" aria-live="polite">${e(change.verdict === 'change' ? reviewLine(change) : 'Not to review')}</p>${actions}<span role="alert" class="problem"></span></div>
</li>`;
}

/** What became of a commit of the approved baselines: the commit linked where the host has a page for it. */
function proofLine(projectId: number, commit: BaselineCommit): string {
  const rerun = commit.rerun
    ? ` · Proctor triggered <a href="/projects/${projectId}/runs/${commit.rerun.run_id}" data-baseline-rerun>run #${commit.rerun.run_number}</a> of the changed tests on it`
    : '';
  if (!commit.proof) return `${rerun} · awaiting a run on this commit`;
  const { run_id, state, summary } = commit.proof;
  return `${rerun} · <a href="/projects/${projectId}/runs/${run_id}" data-baseline-proof="${state}">${e(summary)}</a>`;
}

function commitLine(projectId: number, commit: BaselineCommit): string {
  const files = `${commit.files.length} baseline${commit.files.length === 1 ? '' : 's'}`;
  const branch = commit.branch ? ` on <code>${e(commit.branch)}</code>` : '';
  if (commit.state === 'committed') {
    const sha = e((commit.commit_sha ?? '').slice(0, 12));
    const link = commit.commit_url ? `<a href="${e(commit.commit_url)}" data-baseline-commit>${sha}</a>` : `<code data-baseline-commit>${sha}</code>`;
    return `<li>Committed ${files}${branch}: ${link}${proofLine(projectId, commit)}</li>`;
  }
  if (commit.state === 'queued') return `<li>Committing the approved baselines${branch}…${commit.error ? ` (last attempt: ${e(commit.error)})` : ''}</li>`;
  return `<li>Not committed${branch}: ${e(commit.error ?? commit.state)}</li>`;
}

export function visualPage(viewer: Viewer, project: Project, run: RunRow, view: VisualChanges, commits: BaselineCommit[] = []): string {
  const summary = visualSummary(view.counts) ?? 'No visual change in this run.';
  const reviewable = mayCall(`POST /api/test-runs/${run.id}/visual-changes/review`);
  const all = (review: 'approved' | 'rejected', label: string) =>
    apiForm(`POST /api/test-runs/${run.id}/visual-changes/review`, 'reload', label, `<input type="hidden" name="review" value="${review}">`);
  const bulk = view.counts.total > 0 && reviewable ? `<div class="actions">${all('approved', 'Approve all')}${all('rejected', 'Reject all')}</div>` : '';
  const keys =
    view.counts.total > 0
      ? `<p class="muted keys">Keys: <kbd>j</kbd> or <kbd>→</kbd> next, <kbd>k</kbd> or <kbd>←</kbd> previous${reviewable ? ', <kbd>a</kbd> approve, <kbd>r</kbd> reject' : ''}.</p>`
      : '';
  const list = view.visual_changes.map((change, i) => changeItem(change, i, reviewable)).join('');
  const body = `<p><a href="/projects/${project.id}/runs/${run.id}">← Run #${run.number}</a></p>
<h1>Visual changes of run #${run.number}</h1><p class="visual-summary" data-visual-summary>${e(summary)}</p>${
    commits.length > 0
      ? `<ul class="baseline-commits" aria-label="Baseline commits">${commits.map((commit) => commitLine(project.id, commit)).join('')}</ul>`
      : ''
  }${keys}${bulk}
<ol class="visual-changes" data-visual-run="${run.id}">${list}</ol>`;
  return layout({ title: `Visual changes · run #${run.number} · ${project.name}`, viewer, project, body, script: true });
}
