import type { Project } from '../projects/index.ts';
import { type RunRow, shownBranch } from '../runs/index.ts';
import { ApiForm, FormSection, Options } from './components/forms.tsx';
import { renderPage, StateBadge, type Viewer } from './components/page.tsx';
import { Empty, Table } from './components/table.tsx';

// The pages outside a project's sections: signing in, the projects, a project's runs.

/** What the sign-in page offers besides the provider: a form that mails a link (the server sends mail), or the command that makes one. */
export interface SignInOptions {
  mail: boolean;
  /** Shown above the form: what became of a link asked for by email. */
  notice?: string | null;
  /** The email typed last, kept in the form. */
  email?: string;
}

function ByMail(props: { next: string; email: string }) {
  return (
    <>
      <form method="post" action="/sign-in/email" class="filters">
        <input type="hidden" name="next" value={props.next} />
        <label for="signin-email">
          Email
          <input id="signin-email" name="email" type="email" required maxlength={320} autocomplete="email" size={30} value={props.email} />
        </label>
        <button type="submit">Email me a sign-in link</button>
      </form>
      <p class="muted">Or ask an administrator for a sign-in link, or make one on the server:</p>
    </>
  );
}

export function signInPage(next: string, problem: string | null, provider: { name: string } | null, options: SignInOptions = { mail: false }): string {
  return renderPage({
    title: 'Sign in',
    viewer: null,
    children: (
      <>
        <h1>Sign in to Proctor</h1>
        {problem ? (
          <p role="alert">
            <strong>{problem}</strong>
          </p>
        ) : null}
        {options.notice ? (
          <p role="status">
            <strong>{options.notice}</strong>
          </p>
        ) : null}
        {provider ? (
          <>
            <p>
              <a class="button" href={`/sign-in/oidc?next=${encodeURIComponent(next)}`}>
                Sign in with {provider.name}
              </a>
            </p>
            <p class="muted">Or with a sign-in link:</p>
          </>
        ) : null}
        {options.mail ? (
          <ByMail next={next} email={options.email ?? ''} />
        ) : (
          <p>
            This server sends no mail (its operator has not set <code>PROCTOR_SMTP_URL</code>). Ask an administrator for a sign-in link, or make one on the
            server:
          </p>
        )}
        <pre>npx proctor user login-link --email &lt;your email&gt;</pre>
        <p class="muted">A link signs you in once, within 15 minutes of being made.</p>
        {next !== '/' ? (
          <p class="muted">
            You will be taken back to <code>{next}</code>.
          </p>
        ) : null}
      </>
    ),
  });
}

/** A new project, for an instance admin: its maker becomes its first admin. */
function NewProject() {
  return (
    <FormSection id="new-project" heading="New project" api="POST /api/projects" offered>
      <ApiForm api="POST /api/projects" then="open-project" label="Create project" offered>
        <label for="project-name">
          Name
          <input id="project-name" name="name" required maxlength={200} />
        </label>
        <label for="project-repo">
          Test repository (git URL or folder; none for reports only)
          <input id="project-repo" name="repo_url" maxlength={2000} size={40} data-optional="" />
        </label>
      </ApiForm>
    </FormSection>
  );
}

export function projectsPage(viewer: Viewer, projects: Project[], instanceAdmin: boolean): string {
  return renderPage({
    title: 'Projects',
    viewer,
    children: (
      <>
        <h1>Projects</h1>
        {projects.length === 0 ? (
          <Empty>You are not a member of any project yet: an admin of one adds you.</Empty>
        ) : (
          <Table head={['Project', 'Repository']}>
            {projects.map((p) => (
              <tr>
                <td>
                  <a href={`/projects/${p.id}/runs`}>{p.name}</a>
                </td>
                <td class="muted">{p.repo_name}</td>
              </tr>
            ))}
          </Table>
        )}
        {instanceAdmin ? <NewProject /> : null}
      </>
    ),
  });
}

export interface RunsView {
  project: Project;
  runs: RunRow[];
  environments: { slug: string; name: string }[];
  filter: { environment?: string; branch?: string; state?: string; owner?: string };
  /** The API call that lists the same runs, for the live update. */
  liveUrl: string;
}

const STATES = ['pending', 'queued', 'running', 'passed', 'failed', 'error', 'cancelled'];
const UNDER_WAY = new Set(['pending', 'queued', 'running']);

function when(date: Date): string {
  return date.toISOString().replace('T', ' ').slice(0, 16);
}

function RunRowView(props: { run: RunRow; link: string }) {
  const { run } = props;
  return (
    <tr data-run={run.id}>
      <td>
        <a href={props.link}>{`#${run.number}`}</a>
      </td>
      <td data-state-cell="">
        <StateBadge state={run.state} />
      </td>
      <td>{run.environment_name}</td>
      <td>{shownBranch(run) ?? ''}</td>
      <td class="muted">{(run.test_run_head_sha ?? run.commit ?? '').slice(0, 10)}</td>
      <td data-counts="">{`${run.success_count} passed · ${run.failed_count} failed · ${run.flaky_count} flaky`}</td>
      <td class="muted">{when(run.created_at)}</td>
    </tr>
  );
}

/** The fingerprint of what the list shows: the script reloads when the API's differs. */
export function runsFingerprint(runs: RunRow[]): string {
  return runs.map((r) => `${r.id}:${r.state}:${r.total_count}`).join(',');
}

/**
 * The list's stream: the runs it shows under way, the newest it shows and its filter, so that runs
 * made after the page was read come into it too (client/live.ts).
 */
function runsEvents(view: RunsView): string {
  const { project, runs, filter } = view;
  const query = new URLSearchParams({ after: String(Math.max(0, ...runs.map((run) => run.id))) });
  const underWay = runs.filter((run) => UNDER_WAY.has(run.state)).map((run) => run.id);
  if (underWay.length > 0) query.set('runs', underWay.join(','));
  for (const [name, value] of Object.entries(filter)) if (value) query.set(name, value);
  return `/projects/${project.id}/runs/events?${query.toString()}`;
}

/** The list's filter without its owner, as a query. */
function ownerless(filter: RunsView['filter']): string {
  return new URLSearchParams(Object.entries(filter).filter((entry): entry is [string, string] => entry[0] !== 'owner' && Boolean(entry[1]))).toString();
}

function RunsFilter(props: { view: RunsView }) {
  const { filter, environments } = props.view;
  return (
    <form class="filters" method="get" role="search" aria-label="Filter runs">
      <label>
        Environment
        <select name="environment">
          <Options choices={[['', 'all'], ...environments.map((env) => [env.slug, env.name] as const)]} value={filter.environment ?? ''} />
        </select>
      </label>
      <label>
        Branch
        <input name="branch" value={filter.branch ?? ''} placeholder="any" />
      </label>
      <label>
        State
        <select name="state">
          <Options choices={[['', 'any'], ...STATES.map((s) => [s, s] as const)]} value={filter.state ?? ''} />
        </select>
      </label>
      <label>
        Owner
        <input name="owner" value={filter.owner ?? ''} placeholder="@org/team" maxlength={200} />
      </label>
      <button type="submit">Filter</button>
    </form>
  );
}

export function runsPage(viewer: Viewer, view: RunsView): string {
  const { project, runs } = view;
  return renderPage({
    title: `Runs · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <h1>Runs of {project.name}</h1>
        <RunsFilter view={view} />
        {view.filter.owner ? (
          <p class="muted" data-runs-owner="">
            Runs with a failed or flaky test owned by <strong>{view.filter.owner}</strong> ·{' '}
            <a href={`/projects/${project.id}/runs?${ownerless(view.filter)}`}>every owner</a>
          </p>
        ) : null}
        {runs.length === 0 ? (
          <p class="empty" data-runs-empty="">
            No run matches.
          </p>
        ) : null}
        {/* The table is there when empty too (hidden), for the runs made while the page is open. */}
        <table
          data-runs=""
          data-live-url={view.liveUrl}
          data-live-events={runsEvents(view)}
          data-project={project.id}
          data-fingerprint={runsFingerprint(runs)}
          hidden={runs.length === 0}
        >
          <thead>
            <tr>
              {['Run', 'State', 'Environment', 'Branch', 'Commit', 'Tests', 'Created (UTC)'].map((name) => (
                <th scope="col">{name}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {runs.map((run) => (
              <RunRowView run={run} link={`/projects/${project.id}/runs/${run.id}`} />
            ))}
          </tbody>
        </table>
      </>
    ),
  });
}
