import type { FailureGroupRow, MemberEvent } from '../failuregroups/index.ts';
import type { Project } from '../projects/index.ts';
import { trendFigure } from './components/trend.tsx';
import { ApiForm, Field, Options } from './components/forms.tsx';
import { renderPage, type Viewer } from './components/page.tsx';
import { Empty, Table, Tabs } from './components/table.tsx';
import { IssueSection } from './issue-section.tsx';
import { Owners } from './owners.tsx';

export type GroupStatus = FailureGroupRow['status'];
const STATUSES: GroupStatus[] = ['open', 'resolved', 'ignored'];

export interface MemberView {
  test_case_id: string;
  state: 'active' | 'detached';
  source: 'machine' | 'human';
  sighting_count: number;
  last_seen_at: string;
  last_test_run_id: number | null;
}

/** The group's occurrences in one run: how many of its tests failed with it there. */
export interface RunOccurrences {
  test_run_id: number;
  number: number;
  at: Date;
  tests: number;
}

/** The most runs the occurrences chart draws: the newest. */
const OCCURRENCE_RUNS = 60;

/**
 * The group's failures counted by run, oldest first: a test's first failure in it attaches it, each
 * later one is a sighting. A run the retention policy deleted is left out.
 */
export function occurrencesByRun(events: MemberEvent[], numbers: Map<number, number>): RunOccurrences[] {
  const byRun = new Map<number, RunOccurrences>();
  for (const event of events) {
    if (event.kind === 'detach' || event.test_run_id === null) continue;
    const number = numbers.get(event.test_run_id);
    if (number === undefined) continue;
    const seen = byRun.get(event.test_run_id);
    if (seen) seen.tests++;
    else byRun.set(event.test_run_id, { test_run_id: event.test_run_id, number, at: new Date(event.occurred_at), tests: 1 });
  }
  return [...byRun.values()].sort((a, b) => a.test_run_id - b.test_run_id).slice(-OCCURRENCE_RUNS);
}

const when = (date: Date | string) => new Date(date).toISOString().slice(0, 16).replace('T', ' ');
const groupPath = (project: Project, id: string) => `/projects/${project.id}/failure-groups/${encodeURIComponent(id)}`;

export function groupsPage(viewer: Viewer, project: Project, groups: FailureGroupRow[], status: GroupStatus | undefined, owner: string | null = null): string {
  const byOwner = owner ? `owner=${encodeURIComponent(owner)}` : '';
  const tabs = [
    { name: 'all', href: `?${byOwner}`, current: !status },
    ...STATUSES.map((s) => ({ name: s, href: `?status=${s}${byOwner ? `&${byOwner}` : ''}`, current: s === status })),
  ];
  const listPath = `/projects/${project.id}/failure-groups`;
  const rows = groups.map((g) => (
    <tr data-group={g.id}>
      <td>
        <a href={groupPath(project, g.id)}>{g.title}</a>
        <div class="muted">
          <code>{g.id}</code>
          {g.diagnosis ? ` · ${g.diagnosis.category}: ${g.diagnosis.summary}` : null}
        </div>
        <Owners owners={g.owners} listPath={listPath} />
      </td>
      <td>{g.status}</td>
      <td>{g.member_count}</td>
      <td>{g.occurrence_count}</td>
      <td class="muted">{when(g.last_seen_at)}</td>
    </tr>
  ));
  return renderPage({
    title: `Failure groups · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <h1>Failure groups of {project.name}</h1>
        <Tabs label="Which groups" tabs={tabs} />
        {owner ? (
          <p>
            Groups with a test owned by <strong>{owner}</strong> · <a href={listPath}>every owner</a> ·{' '}
            <a href={`/projects/${project.id}/runs?owner=${encodeURIComponent(owner)}`}>runs with their failures</a>
          </p>
        ) : null}
        {groups.length === 0 ? (
          <Empty>{owner ? `No failure group here has a test owned by ${owner}.` : 'No failure group here.'}</Empty>
        ) : (
          <Table head={['Failure group', 'Status', 'Tests', 'Seen', 'Last seen (UTC)']}>{rows}</Table>
        )}
      </>
    ),
  });
}

function Triage(props: { api: string; group: FailureGroupRow }) {
  const { api, group } = props;
  return (
    <section class="create" aria-labelledby="triage">
      <h2 id="triage">Triage</h2>
      <ApiForm api={`PATCH ${api}`} then="reload" label="Rename">
        <Field for="group-title" label="Title">
          <input id="group-title" name="title" required maxlength={200} size={60} value={group.title} />
        </Field>
      </ApiForm>
      <ApiForm api={`PATCH ${api}`} then="reload" label="Set status">
        <Field for="group-status" label="Status">
          <select id="group-status" name="status">
            <Options choices={STATUSES.map((s) => [s, s] as const)} value={group.status} />
          </select>
        </Field>
      </ApiForm>
      <ApiForm api={`PATCH ${api}`} then="reload" label="Set diagnosis">
        <Field for="diagnosis-category" label="Category">
          <input
            id="diagnosis-category"
            name="diagnosis.category"
            required
            maxlength={100}
            value={group.diagnosis?.category ?? ''}
            placeholder="product bug, test bug, environment..."
          />
        </Field>
        <Field for="diagnosis-summary" label="Summary">
          <input id="diagnosis-summary" name="diagnosis.summary" required maxlength={10000} size={50} value={group.diagnosis?.summary ?? ''} />
        </Field>
      </ApiForm>
    </section>
  );
}

/** `runNumbers`: the numbers of the members' last runs, by id (what the page names them by). */
export function groupPage(
  viewer: Viewer,
  project: Project,
  group: FailureGroupRow,
  members: MemberView[],
  titles: Map<string, string>,
  runNumbers: Map<number, number>,
  occurrences: RunOccurrences[] = [],
  hasTracker = false,
): string {
  const api = `/api/failure-groups/${encodeURIComponent(group.id)}`;
  const rows = members.map((m) => {
    const number = m.last_test_run_id === null ? undefined : runNumbers.get(m.last_test_run_id);
    return (
      <tr data-member={m.test_case_id}>
        <td>{titles.get(m.test_case_id) ?? m.test_case_id}</td>
        <td>
          {m.state}
          {m.source === 'human' ? ' (by a person)' : ''}
        </td>
        <td>{m.sighting_count}</td>
        <td>
          {/* A run the retention policy deleted is named by nothing. */}
          {m.last_test_run_id && number !== undefined ? <a href={`/projects/${project.id}/runs/${m.last_test_run_id}`}>#{number}</a> : null}{' '}
          <span class="muted">{when(m.last_seen_at)}</span>
        </td>
        <td>{m.state === 'active' ? <ApiForm api={`DELETE ${api}/members/${encodeURIComponent(m.test_case_id)}`} then="reload" label="Detach" /> : null}</td>
      </tr>
    );
  });
  const chart = trendFigure({
    label: `Tests failing with it in each of the last ${occurrences.length} runs it was seen in, oldest first`,
    barUnit: 'tests',
    points: occurrences.map((run) => ({
      x: `#${run.number}`,
      bars: [{ value: run.tests, colour: '#cf222e', label: 'tests' }],
      line: null,
      text: `run #${run.number} on ${when(run.at)}: ${run.tests} test${run.tests === 1 ? '' : 's'} failed with it`,
      href: `/projects/${project.id}/runs/${run.test_run_id}`,
    })),
  });
  return renderPage({
    title: `${group.title} · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <h1>{group.title}</h1>
        <p class="muted">
          <code>{group.id}</code> · {group.status} · seen {group.occurrence_count} times, first {when(group.first_seen_at)}, last {when(group.last_seen_at)}
        </p>
        <Owners owners={group.owners} listPath={`/projects/${project.id}/failure-groups`} />
        {group.diagnosis ? (
          <p>
            <strong>{group.diagnosis.category}</strong>: {group.diagnosis.summary} <span class="muted">({when(group.diagnosis.created_at)})</span>
          </p>
        ) : (
          <p class="muted">No diagnosis yet.</p>
        )}
        <IssueSection subject={{ kind: 'failure_group', id: group.id }} issue={group.issue} hasTracker={hasTracker} />
        <h2>Occurrences</h2>
        {chart}
        <Triage api={api} group={group} />
        <h2>Tests ({members.length})</h2>
        <Table head={['Test', 'State', 'Seen', 'Last run', 'Action']}>{rows}</Table>
      </>
    ),
  });
}
