import type { Project } from '../projects/index.ts';
import { ApiForm, Field, FormSection } from './components/forms.tsx';
import { renderPage, type Viewer } from './components/page.tsx';
import { Empty, Table, Tabs } from './components/table.tsx';

export interface SnoozeView {
  id: number;
  test_ids: string[];
  snooze_until: Date;
  description: string | null;
  scoped_to_environment_id: number | null;
  source: 'user' | 'auto';
  created_by: string | null;
}

export type SnoozeStatus = 'active' | 'expired' | 'all';

/** Who made a snooze, as a person reads it. */
export function snoozeAuthor(snooze: { source: 'user' | 'auto'; created_by: string | null }, authors: Map<string, string>): string {
  if (snooze.source === 'auto') return 'the quarantine policy';
  return snooze.created_by ? (authors.get(snooze.created_by) ?? 'a former member') : 'an API key';
}

function Row(props: { snooze: SnoozeView; environments: Map<number, string>; titles: Map<string, string>; authors: Map<string, string>; now: Date }) {
  const { snooze, environments, titles, authors, now } = props;
  const active = snooze.snooze_until > now;
  const where = snooze.scoped_to_environment_id === null ? 'every environment' : (environments.get(snooze.scoped_to_environment_id) ?? '?');
  return (
    <tr data-snooze={snooze.id}>
      <td>
        <ul class="tests">
          {snooze.test_ids.map((id) => (
            <li>{titles.get(id) ?? id}</li>
          ))}
        </ul>
        {snooze.description ? <div class="muted">{snooze.description}</div> : null}
      </td>
      <td>{where}</td>
      <td>
        {active ? 'until' : 'ended'} {snooze.snooze_until.toISOString().slice(0, 16).replace('T', ' ')}
      </td>
      <td>{snoozeAuthor(snooze, authors)}</td>
      <td>
        <div class="actions">
          {active ? (
            <ApiForm api={`PATCH /api/snoozes/${snooze.id}`} then="reload" label="Expire now">
              <input type="hidden" name="expire_now" data-type="bool" value="true" />
            </ApiForm>
          ) : null}
          <ApiForm api={`DELETE /api/snoozes/${snooze.id}`} then="reload" label="Delete" />
        </div>
      </td>
    </tr>
  );
}

/** Tests a person found by their words, to pick for a new snooze. */
export interface FoundTests {
  words: string;
  tests: { id: string; name: string; file_path: string; runner_project: string; tags: string[] }[];
  total: number;
}

function FindForm(props: { status: SnoozeStatus; found: FoundTests | null }) {
  return (
    <form class="filters" method="get" role="search" aria-label="Find tests to snooze">
      <input type="hidden" name="status" value={props.status} />
      <Field for="find-tests" label="Find tests (title, file or @tag)">
        <input id="find-tests" name="find" value={props.found?.words ?? ''} maxlength={200} />
      </Field>
      <button type="submit">Find</button>
    </form>
  );
}

function PickedTests(props: { found: FoundTests | null }) {
  const { found } = props;
  if (!found) return null;
  if (found.tests.length === 0) return <p class="muted">No test matches {JSON.stringify(found.words)}.</p>;
  return (
    <fieldset class="picked">
      <legend>Tests found for {JSON.stringify(found.words)}: pick those to snooze</legend>
      <ul>
        {found.tests.map((test) => (
          <li>
            <label class="pick">
              <input type="checkbox" name="test_ids" data-type="list" value={test.id} /> {test.name}{' '}
              <span class="muted">{[test.file_path, test.runner_project, ...test.tags].filter(Boolean).join(' · ')}</span>
            </label>
          </li>
        ))}
      </ul>
      {found.total > found.tests.length ? (
        <p class="muted">
          The first {found.tests.length} of {found.total}: narrow the words to see the others.
        </p>
      ) : null}
    </fieldset>
  );
}

function CreateForm(props: { environments: Map<number, string>; today: string; status: SnoozeStatus; found: FoundTests | null }) {
  const { found } = props;
  return (
    <FormSection id="new-snooze" heading="New snooze" api="POST /api/snoozes">
      <FindForm status={props.status} found={found} />
      <ApiForm api="POST /api/snoozes" then="reload" label="Snooze">
        <PickedTests found={found} />
        <Field for="new-tests" label={`${found ? 'More test ids' : 'Test ids'} (comma-separated)`}>
          <input id="new-tests" name="test_ids" data-type="csv" size={44} data-optional="" />
        </Field>
        <Field for="new-until" label="Until">
          <input id="new-until" type="date" name="snooze_until" data-type="end-of-day" min={props.today} required />
        </Field>
        <Field for="new-where" label="Where">
          <select id="new-where" name="scoped_to_environment_id" data-type="number" data-optional="">
            <option value="">every environment</option>
            {[...props.environments.entries()].map(([id, name]) => (
              <option value={id}>{name}</option>
            ))}
          </select>
        </Field>
        <Field for="new-why" label="Reason">
          <input id="new-why" name="description" maxlength={5000} data-optional="" />
        </Field>
      </ApiForm>
    </FormSection>
  );
}

export function snoozesPage(
  viewer: Viewer,
  project: Project,
  view: {
    status: SnoozeStatus;
    snoozes: SnoozeView[];
    environments: Map<number, string>;
    titles: Map<string, string>;
    authors: Map<string, string>;
    found: FoundTests | null;
    now: Date;
  },
): string {
  const tabs = (['active', 'expired', 'all'] as const).map((status) => ({ name: status, href: `?status=${status}`, current: status === view.status }));
  return renderPage({
    title: `Snoozes · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <h1>Snoozes of {project.name}</h1>
        <Tabs label="Which snoozes" tabs={tabs} />
        {view.snoozes.length === 0 ? (
          <Empty>No snooze here.</Empty>
        ) : (
          <Table head={['Tests', 'Where', 'When', 'Made by', 'Actions']}>
            {view.snoozes.map((snooze) => (
              <Row snooze={snooze} environments={view.environments} titles={view.titles} authors={view.authors} now={view.now} />
            ))}
          </Table>
        )}
        <CreateForm environments={view.environments} today={view.now.toISOString().slice(0, 10)} status={view.status} found={view.found} />
      </>
    ),
  });
}
