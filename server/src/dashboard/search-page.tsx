import type { ComponentChildren } from 'preact';
import type { Project } from '../projects/index.ts';
import type { SearchResult } from '../search/index.ts';
import { renderPage, StateBadge, type Viewer } from './components/page.tsx';

// What the header's search box found: the tests, runs and failure groups a text names, each a link,
// each kind a list of its own (j and k move over their rows).

function Section(props: { id: string; heading: string; count: number; items: ComponentChildren[]; empty: string }) {
  return (
    <section aria-labelledby={props.id}>
      <h2 id={props.id}>{`${props.heading} (${props.count})`}</h2>
      {props.items.length === 0 ? (
        <p class="muted">{props.empty}</p>
      ) : (
        <ul class="rows">
          {props.items.map((item) => (
            <li>{item}</li>
          ))}
        </ul>
      )}
    </section>
  );
}

const MATCHED: Record<SearchResult['runs'][number]['matched'], string> = { number: 'its number', commit: 'its commit', branch: 'its branch' };

function SearchForm(props: { q: string }) {
  return (
    <form class="filters" method="get" role="search" aria-label="Search the project">
      <label>
        Search
        <input type="search" name="q" value={props.q} maxlength={200} placeholder="a test's title or file, #12, a commit, a branch, a failure" />
      </label>
      <button type="submit">Search</button>
    </form>
  );
}

export function searchPage(viewer: Viewer, project: Project, q: string, found: SearchResult | null, limit: number): string {
  const base = `/projects/${project.id}`;
  if (!found) {
    return renderPage({
      title: `Search · ${project.name}`,
      viewer,
      project,
      children: (
        <>
          <h1>Search {project.name}</h1>
          <SearchForm q={q} />
        </>
      ),
    });
  }
  const more = (count: number) => (count >= limit ? `the first ${limit}: say more to narrow` : '');
  const tests = found.tests.map((test) => (
    <>
      <a href={`${base}/tests/${encodeURIComponent(test.test_case_id)}`}>{test.title}</a>{' '}
      <span class="muted">
        {test.file_path}
        {test.runner_project ? ` · ${test.runner_project}` : ''}
        {test.is_active ? '' : ' · no longer in the suite'}
      </span>
    </>
  ));
  const runs = found.runs.map((run) => (
    <>
      <a href={`${base}/runs/${run.id}`}>Run #{run.number}</a> <StateBadge state={run.state} />{' '}
      <span class="muted">
        {run.environment_name}
        {run.branch ? ` · ${run.branch}` : ''}
        {run.commit ? ` · ${run.commit.slice(0, 10)}` : ''} · found by {MATCHED[run.matched]}
      </span>
    </>
  ));
  const groups = found.failure_groups.map((group) => (
    <>
      <a href={`${base}/failure-groups/${encodeURIComponent(group.id)}`}>{group.title}</a>{' '}
      <span class="muted">
        {group.category} · {group.status}
      </span>
    </>
  ));
  const none = found.tests.length + found.runs.length + found.failure_groups.length === 0;
  return renderPage({
    title: `${q} · Search · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <h1>Search {project.name}</h1>
        <SearchForm q={q} />
        {none ? (
          <p class="empty">
            Nothing in {project.name} matches "{q}".
          </p>
        ) : null}
        <Section
          id="found-tests"
          heading="Tests"
          count={found.tests.length}
          items={tests}
          empty={`No test's title or file contains "${q}". ${more(found.tests.length)}`}
        />
        <Section id="found-runs" heading="Runs" count={found.runs.length} items={runs} empty="No run has that number, commit or branch." />
        <Section
          id="found-groups"
          heading="Failure groups"
          count={found.failure_groups.length}
          items={groups}
          empty={`No failure group's title contains "${q}".`}
        />
      </>
    ),
  });
}
