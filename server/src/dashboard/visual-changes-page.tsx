import type { Project } from '../projects/index.ts';
import type { RunRow } from '../runs/index.ts';
import type { BaselineCommit, VisualChange, VisualChanges } from '../visual/index.ts';
import { ApiForm } from './components/forms.tsx';
import { renderPage, type Viewer } from './components/page.tsx';
import { mayCall } from './permissions.ts';
import { visualSummary } from './visual-summary.ts';

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

/** The changed areas, for the script to place over the image (nothing when the size is unknown). */
function Boxes(props: { change: VisualChange }) {
  const { width, height, boxes } = props.change.comparison;
  if (!width || !height) return null;
  return (
    <>
      {boxes.map((b) => (
        <span class="change-box" data-box={`${b.x},${b.y},${b.width},${b.height}`}></span>
      ))}
    </>
  );
}

function Frame(props: { kind: string; url: string; alt: string; change: VisualChange }) {
  return (
    <div class={`frame frame-${props.kind}`}>
      <img src={props.url} alt={props.alt} loading="lazy" decoding="async" />
      <Boxes change={props.change} />
    </div>
  );
}

const VERDICT_LABEL = { flaky: 'Flaky', noise: 'Noise' } as const;

function ViewButton(props: { view: string; label: string; pressed: boolean }) {
  return (
    <button type="button" data-view-button={props.view} aria-pressed={props.pressed ? 'true' : 'false'}>
      {props.label}
    </button>
  );
}

function ChangeItem(props: { change: VisualChange; index: number; mayReview: boolean }) {
  const { change } = props;
  const id = `change-${change.id}`;
  // A flaky or noisy screenshot is not offered as a baseline: no approve (nor reject) to press.
  const reviewable = props.mayReview && change.verdict === 'change';
  const name = change.title ?? change.test_id;
  const where = [change.file_path, change.runner_project, change.retry > 0 ? `retry ${change.retry}` : ''].filter(Boolean).join(' · ');
  const { width, height } = change.comparison;
  const size = width && height ? { 'data-width': String(width), 'data-height': String(height) } : {};
  const snapshot = change.snapshot_name;
  return (
    <li
      class="visual-change"
      id={id}
      data-change={String(change.id)}
      data-state={change.review}
      data-verdict={change.verdict}
      tabindex={-1}
      aria-labelledby={`${id}-title`}
      {...size}
    >
      <h2 id={`${id}-title`}>
        <span class="muted">{props.index + 1}.</span> {name} <code>{snapshot}</code>
      </h2>
      {where ? <p class="muted">{where}</p> : null}
      {change.verdict === 'change' ? null : (
        <p class="visual-verdict" data-verdict={change.verdict}>
          <strong>{VERDICT_LABEL[change.verdict]}</strong>: {change.verdict_reason ?? ''}. Not offered as a baseline.
        </p>
      )}
      <p class="visual-share">{share(change)}</p>
      <div class="visual-tools">
        <div role="group" aria-label={`View of ${snapshot}`}>
          <ViewButton view="side" label="Side by side" pressed={true} />
          <ViewButton view="overlay" label="Overlay" pressed={false} />
          <ViewButton view="diff" label="Diff" pressed={false} />
        </div>
        <label for={`${id}-zoom`}>
          Zoom
          <select id={`${id}-zoom`} data-zoom="">
            <option value="fit">fit</option>
            <option value="1">100%</option>
            <option value="2">200%</option>
            <option value="4">400%</option>
          </select>
        </label>
      </div>
      <div class="visual-view" data-view="side">
        <figure>
          <figcaption>Baseline</figcaption>
          <Frame kind="expected" url={change.expected_url} alt={`Baseline of ${snapshot}`} change={change} />
        </figure>
        <figure>
          <figcaption>New</figcaption>
          <Frame kind="actual" url={change.actual_url} alt={`New ${snapshot}`} change={change} />
        </figure>
      </div>
      <div class="visual-view" data-view="overlay" hidden>
        <figure>
          <figcaption>Baseline left of the slider, new right of it</figcaption>
          <div class="frame frame-overlay">
            <img src={change.expected_url} alt={`Baseline of ${snapshot}`} loading="lazy" decoding="async" />
            <img class="overlay-new" src={change.actual_url} alt={`New ${snapshot}`} loading="lazy" decoding="async" />
            <Boxes change={change} />
          </div>
        </figure>
        <label for={`${id}-slider`}>
          Slider
          <input id={`${id}-slider`} type="range" min="0" max="100" value="50" data-slider="" />
        </label>
      </div>
      <div class="visual-view" data-view="diff" hidden>
        <figure>
          <figcaption>Diff</figcaption>
          {change.diff_url ? (
            <Frame kind="diff" url={change.diff_url} alt={`Diff of ${snapshot}`} change={change} />
          ) : (
            <p class="muted">No diff image: the sizes differ.</p>
          )}
        </figure>
      </div>
      <div class="visual-review">
        <p class="review-state" aria-live="polite">
          {change.verdict === 'change' ? reviewLine(change) : 'Not to review'}
        </p>
        {reviewable ? (
          <>
            <button type="button" data-review="approved">
              Approve <kbd>a</kbd>
            </button>
            <button type="button" data-review="rejected">
              Reject <kbd>r</kbd>
            </button>
          </>
        ) : null}
        <span role="alert" class="problem"></span>
      </div>
    </li>
  );
}

/** What became of a commit of the approved baselines: the run Proctor triggered on it, the run that proves it. */
function Proof(props: { projectId: number; commit: BaselineCommit }) {
  const { projectId, commit } = props;
  return (
    <>
      {commit.rerun ? (
        <>
          {' · Proctor triggered '}
          <a href={`/projects/${projectId}/runs/${commit.rerun.run_id}`} data-baseline-rerun="">
            run #{commit.rerun.run_number}
          </a>
          {' of the changed tests on it'}
        </>
      ) : null}
      {commit.proof ? (
        <>
          {' · '}
          <a href={`/projects/${projectId}/runs/${commit.proof.run_id}`} data-baseline-proof={commit.proof.state}>
            {commit.proof.summary}
          </a>
        </>
      ) : (
        ' · awaiting a run on this commit'
      )}
    </>
  );
}

/** A commit of the approved baselines: linked where the host has a page for it. */
function CommitLine(props: { projectId: number; commit: BaselineCommit }) {
  const { commit } = props;
  const files = `${commit.files.length} baseline${commit.files.length === 1 ? '' : 's'}`;
  const branch = commit.branch ? (
    <>
      {' on '}
      <code>{commit.branch}</code>
    </>
  ) : null;
  if (commit.state === 'committed') {
    const sha = (commit.commit_sha ?? '').slice(0, 12);
    return (
      <li>
        Committed {files}
        {branch}:{' '}
        {commit.commit_url ? (
          <a href={commit.commit_url} data-baseline-commit="">
            {sha}
          </a>
        ) : (
          <code data-baseline-commit="">{sha}</code>
        )}
        <Proof projectId={props.projectId} commit={commit} />
      </li>
    );
  }
  if (commit.state === 'queued')
    return (
      <li>
        Committing the approved baselines{branch}…{commit.error ? ` (last attempt: ${commit.error})` : null}
      </li>
    );
  return (
    <li>
      Not committed{branch}: {commit.error ?? commit.state}
    </li>
  );
}

export function visualPage(viewer: Viewer, project: Project, run: RunRow, view: VisualChanges, commits: BaselineCommit[] = []): string {
  const api = `POST /api/test-runs/${run.id}/visual-changes/review`;
  const reviewable = mayCall(api);
  const any = view.counts.total > 0;
  return renderPage({
    title: `Visual changes · run #${run.number} · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <p>
          <a href={`/projects/${project.id}/runs/${run.id}`}>← Run #{run.number}</a>
        </p>
        <h1>Visual changes of run #{run.number}</h1>
        <p class="visual-summary" data-visual-summary="">
          {visualSummary(view.counts) ?? 'No visual change in this run.'}
        </p>
        {commits.length > 0 ? (
          <ul class="baseline-commits" aria-label="Baseline commits">
            {commits.map((commit) => (
              <CommitLine projectId={project.id} commit={commit} />
            ))}
          </ul>
        ) : null}
        {any ? (
          <p class="muted keys">
            Keys: <kbd>j</kbd> or <kbd>→</kbd> next, <kbd>k</kbd> or <kbd>←</kbd> previous
            {reviewable ? (
              <>
                , <kbd>a</kbd> approve, <kbd>r</kbd> reject
              </>
            ) : null}
            .
          </p>
        ) : null}
        {any && reviewable ? (
          <div class="actions">
            <ApiForm api={api} then="reload" label="Approve all" offered={true}>
              <input type="hidden" name="review" value="approved" />
            </ApiForm>
            <ApiForm api={api} then="reload" label="Reject all" offered={true}>
              <input type="hidden" name="review" value="rejected" />
            </ApiForm>
          </div>
        ) : null}
        <ol class="visual-changes" data-visual-run={String(run.id)}>
          {view.visual_changes.map((change, i) => (
            <ChangeItem change={change} index={i} mayReview={reviewable} />
          ))}
        </ol>
      </>
    ),
  });
}
