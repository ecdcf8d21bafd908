import type { FailureCategory } from '../failuregroups/index.ts';
import type { Project } from '../projects/index.ts';
import { type RunPageDetails, RunReport, type RunRow, type RunTimeline, type SummaryDetail } from '../runs/index.ts';
import type { VisualChanges } from '../visual/index.ts';
import { ApiForm, Field, FoldedForm } from './components/forms.tsx';
import { joined } from './components/html.ts';
import { renderPage, type Viewer } from './components/page.tsx';
import { RunTimeline as TimelineSection } from './components/run-timeline.tsx';
import { visualSummary } from './visual-summary.ts';

const UNDER_WAY = new Set(['pending', 'queued', 'running']);

/** The hidden fields of a rerun of `run`: its environment and itself, and whether its failed tests alone. */
function RerunFields(props: { run: RunRow; onlyFailed: boolean }) {
  return (
    <>
      <input type="hidden" name="environment" value={props.run.environment_slug} />
      <input type="hidden" name="rerun_source_id" data-type="number" value={props.run.id} />
      {props.onlyFailed ? <input type="hidden" name="rerun_only_failed" data-type="bool" value="true" /> : null}
    </>
  );
}

function RunActions(props: { run: RunRow }) {
  const { run } = props;
  return (
    <div class="actions">
      {UNDER_WAY.has(run.state) ? (
        <ApiForm api={`POST /api/test-runs/${run.id}/cancel`} then="reload" label="Cancel run">
          <input type="hidden" name="reason" value="cancelled from the dashboard" />
        </ApiForm>
      ) : (
        <>
          <ApiForm api="PUT /api/test-runs" then="open-run" label="Rerun">
            <RerunFields run={run} onlyFailed={false} />
          </ApiForm>
          {run.failed_count > 0 && !run.details_deleted_at ? (
            <ApiForm api="PUT /api/test-runs" then="open-run" label="Rerun failed tests">
              <RerunFields run={run} onlyFailed={true} />
            </ApiForm>
          ) : null}
        </>
      )}
      {run.details_deleted_at ? null : run.pinned ? (
        <ApiForm api={`DELETE /api/test-runs/${run.id}/pin`} then="reload" label="Unpin" />
      ) : (
        <ApiForm api={`POST /api/test-runs/${run.id}/pin`} then="reload" label="Pin (keep whatever the retention policy)" />
      )}
    </div>
  );
}

/** Snooze a failed test: until a date, here or in every environment, with a reason. */
function SnoozeForm(props: { run: RunRow; test: SummaryDetail; today: string }) {
  const { run, test, today } = props;
  if (test.status !== 'failed' || test.snoozed) return null;
  const id = `snooze-${run.id}-${test.test_case_id}`;
  return (
    <FoldedForm kind="snooze" summary="Snooze" api="POST /api/snoozes">
      <ApiForm api="POST /api/snoozes" then="reload" label="Snooze this test">
        <input type="hidden" name="test_ids" data-type="list" value={test.test_case_id} />
        <input type="hidden" name="created_from_test_run_id" data-type="number" value={run.id} />
        <Field for={`${id}-until`} label="Until">
          <input id={`${id}-until`} type="date" name="snooze_until" data-type="end-of-day" min={today} required />
        </Field>
        <Field for={`${id}-where`} label="Where">
          <select id={`${id}-where`} name="scoped_to_environment_id" data-type="number" data-optional="">
            <option value={run.environment_id}>{run.environment_name} only</option>
            <option value="">every environment</option>
          </select>
        </Field>
        <Field for={`${id}-why`} label="Reason">
          <input id={`${id}-why`} name="description" maxlength={5000} data-optional="" />
        </Field>
      </ApiForm>
    </FoldedForm>
  );
}

/**
 * A filter of the run's failures: every value with its count, each a link that shows its failures
 * alone, the one shown marked current; nothing when no failure has a value.
 */
function FailureFilter(props: { label: string; noun: string; base: string; param: string; counts: Map<string, number>; shown: string | null }) {
  const { base, shown } = props;
  if (props.counts.size === 0) return null;
  const links = [...props.counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([value, n]) =>
      value === shown ? (
        <strong aria-current="page">
          {value} ({n})
        </strong>
      ) : (
        <a href={`${base}?${props.param}=${encodeURIComponent(value)}`}>
          {value} ({n})
        </a>
      ),
    );
  const all = shown ? <a href={base}>every {props.noun}</a> : <strong aria-current="page">every {props.noun}</strong>;
  return (
    <nav aria-label={`Failures by ${props.noun}`} class="kinds">
      {props.label}: {joined([all, ...links], ' · ')}
    </nav>
  );
}

/** The kinds of the run's failures, each a link that shows its failures alone. */
function KindFilter(props: { base: string; details: RunPageDetails; shown: FailureCategory | null }) {
  const counts = new Map<string, number>();
  for (const test of props.details.tests)
    if (test.failure_category && test.failure_category !== 'unknown') counts.set(test.failure_category, (counts.get(test.failure_category) ?? 0) + 1);
  return <FailureFilter label="Failures by kind" noun="kind" base={props.base} param="category" counts={counts} shown={props.shown} />;
}

/**
 * The owners of the run's failed and flaky tests, each a link that shows their failures alone; with
 * one shown, a link to the project's runs with failures of theirs.
 */
function OwnerFilter(props: { base: string; runs: string; details: RunPageDetails; shown: string | null }) {
  const counts = new Map<string, number>();
  for (const test of props.details.tests)
    if (test.status === 'failed' || test.status === 'flaky') for (const owner of test.owners) counts.set(owner, (counts.get(owner) ?? 0) + 1);
  return (
    <>
      <FailureFilter label="Failures by owner" noun="owner" base={props.base} param="owner" counts={counts} shown={props.shown} />
      {props.shown ? (
        <p class="muted">
          <a href={`${props.runs}?owner=${encodeURIComponent(props.shown)}`}>Runs with failures owned by {props.shown}</a>
        </p>
      ) : null}
    </>
  );
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
  const base = `/projects/${project.id}/runs/${run.id}`;
  // Visual changes are counted apart from the failures, with a link to review them.
  const visualLine = visual && visualSummary(visual);
  // A kind or an owner shows its failed and flaky tests alone; the others stay as they are.
  const failing = (test: SummaryDetail) => test.status === 'failed' || test.status === 'flaky';
  const shown =
    kind || owner
      ? {
          ...details,
          tests: details.tests.filter((test) => !failing(test) || ((!kind || test.failure_category === kind) && (!owner || test.owners.includes(owner)))),
        }
      : details;
  const underWay = UNDER_WAY.has(run.state);
  // A run under way streams its results into the page (dashboard/client/live.ts): rows, counts and
  // progress in place; when it ends, the report (data-run-report) is read again and put in place.
  const live = underWay
    ? {
        'data-live-run': run.id,
        'data-live-events': `${base}/events`,
        'data-live-from': livePosition ?? '',
        'data-group-base': `/projects/${project.id}/failure-groups/`,
      }
    : {};
  return renderPage({
    title: `Run #${run.number} · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <div data-run-report={run.id} data-state={run.state} {...live}>
          {underWay ? (
            <p class="live-progress" data-live-progress="" role="status" aria-live="polite">
              Under way: results show here as they are stored.
            </p>
          ) : null}
          <RunReport
            project={project}
            run={run}
            details={shown}
            actions={{
              showAll: `${base}?all=1`,
              run: (
                <>
                  <RunActions run={run} />
                  {visualLine ? (
                    <p class="visual-summary">
                      <a href={`${base}/visual`}>{visualLine}</a>
                    </p>
                  ) : null}
                  <KindFilter base={base} details={details} shown={kind} />
                  <OwnerFilter base={base} runs={`/projects/${project.id}/runs`} details={details} shown={owner} />
                </>
              ),
              test: (test) => <SnoozeForm run={run} test={test} today={today} />,
              groupLink: (groupId) => `/projects/${project.id}/failure-groups/${encodeURIComponent(groupId)}`,
              compareLink: (otherId) => `${base}/compare/${otherId}`,
            }}
          />
        </div>
        <TimelineSection projectId={project.id} timeline={timeline} />
      </>
    ),
  });
}
