import type { ComparedTest, Comparison } from '../comparisons/index.ts';
import type { ShiftMark } from '../durations/index.ts';
import type { Project } from '../projects/index.ts';
import { commitsCompareUrl, formatDuration } from '../runs/index.ts';
import { joined } from './components/html.ts';
import { renderPage, StateBadge, type Viewer } from './components/page.tsx';

type RunReference = Comparison['run'];

const LISTS: { key: Exclude<keyof Comparison, 'run' | 'base' | 'duration_changes'>; heading: string; empty: string }[] = [
  { key: 'new_failures', heading: 'New failures', empty: 'No test fails here that did not fail there.' },
  { key: 'fixed', heading: 'Fixed', empty: 'No test that failed there passes here.' },
  { key: 'still_failing', heading: 'Still failing', empty: 'No test failed in both.' },
  { key: 'added', heading: 'Added tests', empty: 'No test is new here.' },
  { key: 'removed', heading: 'Removed tests', empty: 'Every test there ran here too.' },
  { key: 'flaky', heading: 'Flaky in either', empty: 'No test was flaky in either run.' },
];

/** A list's heading as its anchor: `New failures` is `#new-failures`. */
const anchor = (heading: string) => heading.toLowerCase().replace(/\W+/g, '-');

function RunLine(props: { project: Project; label: string; run: RunReference }) {
  const { run } = props;
  return (
    <li>
      {props.label}: <a href={`/projects/${props.project.id}/runs/${run.id}`}>run #{run.number}</a> <StateBadge state={run.state} />{' '}
      <span class="muted">
        {run.environment_slug}
        {run.branch ? ` · ${run.branch}` : null}
        {run.commit ? (
          <>
            {' · '}
            <code>{run.commit.slice(0, 12)}</code>
          </>
        ) : null}
        {` · ${run.created_at.slice(0, 16).replace('T', ' ')}`}
      </span>
    </li>
  );
}

function Status(props: { value: string | null }) {
  return props.value === null ? <span class="muted">not run</span> : <span class={`tag ${props.value}`}>{props.value}</span>;
}

function TestCell(props: { project: Project; test: ComparedTest }) {
  const { test } = props;
  const where = [test.file_path, test.runner_project].filter(Boolean);
  const failure = test.failure_group_title ?? test.error_message?.split('\n').find((line) => line.trim()) ?? null;
  return (
    <>
      <a href={`/projects/${props.project.id}/tests/${test.test_case_id}`}>{test.title}</a>
      <div class="muted">{where.join(' · ')}</div>
      {failure && test.status === 'failed' ? <div class="failure">{failure}</div> : null}
    </>
  );
}

/** A test flagged slower in the run's environment: since which run, by how much. */
function SlowerMark(props: { project: Project; mark: ShiftMark | undefined }) {
  const { mark } = props;
  if (!mark) return null;
  const rise = Math.round(((mark.recent_ms - mark.baseline_ms) / Math.max(mark.baseline_ms, 1)) * 100);
  return (
    <div class="slower-mark">
      <span class="tag slower">slower</span> {rise}% since{' '}
      {mark.started_run_id ? (
        <a href={`/projects/${props.project.id}/runs/${mark.started_run_id}`}>run #{mark.started_run_number}</a>
      ) : (
        `run #${mark.started_run_number}`
      )}
    </div>
  );
}

function Timing(props: { test: ComparedTest; durations: boolean }) {
  const { test } = props;
  if (!props.durations)
    return (
      <>
        <td>
          <Status value={test.base_status} />
        </td>
        <td>
          <Status value={test.status} />
        </td>
      </>
    );
  const change = test.duration !== null && test.base_duration !== null ? test.duration - test.base_duration : null;
  return (
    <>
      <td>{formatDuration(test.base_duration)}</td>
      <td>{formatDuration(test.duration)}</td>
      <td>{change === null ? '' : `${change > 0 ? '+' : '−'}${formatDuration(Math.abs(change))}`}</td>
    </>
  );
}

function ListSection(props: {
  project: Project;
  heading: string;
  empty: string;
  list: Comparison['new_failures'];
  durations?: boolean;
  slower?: ReadonlyMap<string, ShiftMark>;
}) {
  const { project, heading, list } = props;
  const durations = props.durations ?? false;
  const id = anchor(heading);
  const head = (
    <h2 id={id}>
      {heading} ({list.total})
    </h2>
  );
  if (list.total === 0)
    return (
      <section aria-labelledby={id} data-list={id}>
        {head}
        <p class="muted">{props.empty}</p>
      </section>
    );
  const columns = durations ? ['Before', 'Now', 'Change'] : ['Before', 'Now'];
  return (
    <section aria-labelledby={id} data-list={id}>
      {head}
      <div class="scroll">
        <table>
          <thead>
            <tr>
              {['Test', ...columns].map((name) => (
                <th scope="col">{name}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {list.tests.map((test) => (
              <tr data-test={test.test_case_id}>
                <td>
                  <TestCell project={project} test={test} />
                  <SlowerMark project={project} mark={props.slower?.get(test.test_case_id)} />
                </td>
                <Timing test={test} durations={durations} />
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.total > list.tests.length ? (
        <p class="muted">
          The first {list.tests.length} of {list.total}.
        </p>
      ) : null}
    </section>
  );
}

export function comparePage(viewer: Viewer, project: Project, comparison: Comparison, slower: ReadonlyMap<string, ShiftMark> = new Map()): string {
  const { run, base } = comparison;
  const commits = base.commit && run.commit && base.commit !== run.commit ? commitsCompareUrl(project.repo_url, base.commit, run.commit) : null;
  return renderPage({
    title: `Run #${run.number} against #${base.number} · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <h1>
          Run #{run.number} compared with run #{base.number}
        </h1>
        <ul class="runs">
          <RunLine project={project} label="Now" run={run} />
          <RunLine project={project} label="Before" run={base} />
        </ul>
        {commits ? (
          <p>
            <a href={commits} rel="noreferrer">
              The commits between them
            </a>{' '}
            on the repository's host
          </p>
        ) : null}
        <nav aria-label="Lists" class="lists">
          {joined(
            LISTS.map((list) => (
              <a href={`#${anchor(list.heading)}`}>
                {list.heading} ({comparison[list.key].total})
              </a>
            )),
            ' · ',
          )}
        </nav>
        {LISTS.map((list) => (
          <ListSection project={project} heading={list.heading} empty={list.empty} list={comparison[list.key]} />
        ))}
        <ListSection
          project={project}
          heading="Duration changes"
          empty="No test that passed in both took a different time."
          list={comparison.duration_changes}
          durations={true}
          slower={slower}
        />
      </>
    ),
  });
}
