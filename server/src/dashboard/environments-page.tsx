import type { Project } from '../projects/index.ts';
import { markdownText } from '@proctor/reporter/markdown';
import type { OrderStrategy } from '@proctor/reporter/runs/order';
import { ApiForm, Field, FoldedForm, FormSection, Options } from './components/forms.tsx';
import { renderPage, type Viewer } from './components/page.tsx';
import { Empty, Table } from './components/table.tsx';

export interface EnvironmentView {
  id: number;
  slug: string;
  name: string;
  runner_projects_match: string[];
  runner_projects_ignore: string[];
  scheduled_trigger: string | null;
  burn_in_repeats: number;
  playwright_args: string[];
  max_failures: number | null;
  order_strategy: string;
  full_run_every: number | null;
  is_disabled: boolean | null;
}

function TriggerForm(props: { env: EnvironmentView }) {
  const id = `trigger-${props.env.id}`;
  return (
    <ApiForm api="PUT /api/test-runs" then="open-run" label="Run now">
      <input type="hidden" name="environment" value={props.env.slug} />
      <Field for={id} label="Branch">
        <input id={id} name="branch" maxlength={500} placeholder="the default" data-optional="" />
      </Field>
      <Field for={`${id}-build`} label="or a build's URL">
        <input id={`${id}-build`} name="build.url" type="url" maxlength={2000} placeholder="none" data-optional="" />
      </Field>
      {/* `affected: true`: the tests the build's changes can break, and last time's failures (docs/ci.md, "Only what a change can break"). */}
      <label class="pick" for={`${id}-affected`}>
        <input id={`${id}-affected`} name="affected" type="checkbox" value="true" data-type="bool" /> Only affected tests
      </label>
    </ApiForm>
  );
}

/** The order strategies as the settings name them (docs/ci.md, "Likely failures first"). */
const ORDER_LABELS: [OrderStrategy, string][] = [
  ['duration', 'Longest first'],
  ['failures-first', 'Likely failures first'],
];

function EditForm(props: { env: EnvironmentView }) {
  const { env } = props;
  const id = (name: string) => `env-${env.id}-${name}`;
  const api = `PATCH /api/environments/${env.id}`;
  return (
    <FoldedForm kind="edit" summary="Edit" api={api}>
      <ApiForm api={api} then="reload" label="Save">
        <Field for={id('name')} label="Name">
          <input id={id('name')} name="name" value={env.name} required maxlength={200} />
        </Field>
        <Field for={id('schedule')} label="Schedule (cron, UTC)">
          <input id={id('schedule')} name="scheduled_trigger" value={env.scheduled_trigger ?? ''} placeholder="none" data-type="nullable" />
        </Field>
        <Field for={id('match')} label="Runner projects (comma-separated)">
          <input id={id('match')} name="runner_projects_match" value={env.runner_projects_match.join(', ')} placeholder="all" data-type="csv" />
        </Field>
        <Field for={id('ignore')} label="Ignored runner projects">
          <input id={id('ignore')} name="runner_projects_ignore" value={env.runner_projects_ignore.join(', ')} placeholder="none" data-type="csv" />
        </Field>
        <Field for={id('burn')} label="Burn-in repeats of new tests">
          <input id={id('burn')} name="burn_in_repeats" type="number" min="0" max="100" value={env.burn_in_repeats} data-type="number" />
        </Field>
        <Field for={id('stop')} label="Stop a run after this many failures">
          <input
            id={id('stop')}
            name="max_failures"
            type="number"
            min="1"
            max="100000"
            value={env.max_failures ?? ''}
            placeholder="never"
            data-type="nullable-number"
          />
        </Field>
        <Field for={id('order')} label="Order of a run's tests">
          <select id={id('order')} name="order_strategy">
            <Options choices={ORDER_LABELS} value={env.order_strategy} />
          </select>
        </Field>
        <Field for={id('full')} label="Affected runs: a full run after this many in a row">
          <input
            id={id('full')}
            name="full_run_every"
            type="number"
            min="1"
            max="10000"
            value={env.full_run_every ?? ''}
            placeholder="never"
            data-type="nullable-number"
          />
        </Field>
        <Field for={id('args')} label="Playwright arguments (space-separated; values with =)">
          <input
            id={id('args')}
            name="playwright_args"
            value={env.playwright_args.join(' ')}
            placeholder="none, e.g. --config=ci.config.ts --workers=2"
            data-type="words"
          />
        </Field>
      </ApiForm>
    </FoldedForm>
  );
}

function Badge(props: { project: Project; env: EnvironmentView; publicUrl: string }) {
  const { project, env, publicUrl } = props;
  const path = `/badges/${project.id}/${encodeURIComponent(env.slug)}.svg`;
  const markdown = `[![${markdownText(env.name)} tests](${publicUrl}${path})](${publicUrl}/projects/${project.id}/runs?environment=${encodeURIComponent(env.slug)})`;
  const id = `badge-${env.id}`;
  return (
    <>
      <img src={path} alt={`Status badge of ${env.name}`} height="20" />
      <Field for={id} label="Markdown">
        <input id={id} class="snippet" readonly value={markdown} />
      </Field>
    </>
  );
}

export function environmentsPage(viewer: Viewer, project: Project, environments: EnvironmentView[], publicUrl: string): string {
  return renderPage({
    title: `Environments · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <h1>Environments of {project.name}</h1>
        {environments.length === 0 ? (
          <Empty>No environment yet.</Empty>
        ) : (
          <Table head={['Environment', 'Schedule', 'Badge', 'Trigger']}>
            {environments.map((env) => (
              <tr data-environment={env.slug}>
                <td>
                  <strong>{env.name}</strong> <span class="muted">{env.slug}</span>
                  {env.is_disabled ? (
                    <>
                      {' '}
                      <span class="muted">(disabled)</span>
                    </>
                  ) : null}
                  <EditForm env={env} />
                </td>
                <td>{env.scheduled_trigger ? <code>{env.scheduled_trigger}</code> : <span class="muted">none</span>}</td>
                <td>
                  <Badge project={project} env={env} publicUrl={publicUrl} />
                </td>
                <td>
                  <TriggerForm env={env} />
                </td>
              </tr>
            ))}
          </Table>
        )}
        <FormSection id="new-environment" heading="New environment" api="POST /api/environments">
          <ApiForm api="POST /api/environments" then="reload" label="Create">
            <Field for="new-name" label="Name">
              <input id="new-name" name="name" required maxlength={200} />
            </Field>
            <Field for="new-slug" label="Slug">
              <input id="new-slug" name="slug" required maxlength={100} />
            </Field>
          </ApiForm>
        </FormSection>
      </>
    ),
  });
}
