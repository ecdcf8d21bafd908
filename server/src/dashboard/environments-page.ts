import type { Project } from '../projects/index.ts';
import { markdownText } from '@proctor/reporter/markdown';
import { escapeXml as e } from '../xml.ts';
import { apiForm, foldedForm, formSection } from './forms.ts';
import { layout, type Viewer } from './layout.ts';

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
  is_disabled: boolean | null;
}

function triggerForm(env: EnvironmentView): string {
  const id = `trigger-${env.id}`;
  return apiForm(
    'PUT /api/test-runs',
    'open-run',
    'Run now',
    `<input type="hidden" name="environment" value="${e(env.slug)}">
<label for="${id}">Branch<input id="${id}" name="branch" maxlength="500" placeholder="the default" data-optional></label>
<label for="${id}-build">or a build's URL<input id="${id}-build" name="build.url" type="url" maxlength="2000" placeholder="none" data-optional></label>`,
  );
}

function editForm(env: EnvironmentView): string {
  const id = (name: string) => `env-${env.id}-${name}`;
  const fields = `
<label for="${id('name')}">Name<input id="${id('name')}" name="name" value="${e(env.name)}" required maxlength="200"></label>
<label for="${id('schedule')}">Schedule (cron, UTC)<input id="${id('schedule')}" name="scheduled_trigger" value="${e(env.scheduled_trigger ?? '')}" placeholder="none" data-type="nullable"></label>
<label for="${id('match')}">Runner projects (comma-separated)<input id="${id('match')}" name="runner_projects_match" value="${e(env.runner_projects_match.join(', '))}" placeholder="all" data-type="csv"></label>
<label for="${id('ignore')}">Ignored runner projects<input id="${id('ignore')}" name="runner_projects_ignore" value="${e(env.runner_projects_ignore.join(', '))}" placeholder="none" data-type="csv"></label>
<label for="${id('burn')}">Burn-in repeats of new tests<input id="${id('burn')}" name="burn_in_repeats" type="number" min="0" max="100" value="${env.burn_in_repeats}" data-type="number"></label>
<label for="${id('stop')}">Stop a run after this many failures<input id="${id('stop')}" name="max_failures" type="number" min="1" max="100000" value="${env.max_failures ?? ''}" placeholder="never" data-type="nullable-number"></label>
<label for="${id('args')}">Playwright arguments (space-separated; values with =)<input id="${id('args')}" name="playwright_args" value="${e(env.playwright_args.join(' '))}" placeholder="none, e.g. --config=ci.config.ts --workers=2" data-type="words"></label>`;
  return foldedForm('edit', 'Edit', apiForm(`PATCH /api/environments/${env.id}`, 'reload', 'Save', fields));
}

function badge(project: Project, env: EnvironmentView, publicUrl: string): string {
  const path = `/badges/${project.id}/${encodeURIComponent(env.slug)}.svg`;
  const markdown = `[![${markdownText(env.name)} tests](${publicUrl}${path})](${publicUrl}/projects/${project.id}/runs?environment=${encodeURIComponent(env.slug)})`;
  const id = `badge-${env.id}`;
  return `<img src="${e(path)}" alt="Status badge of ${e(env.name)}" height="20">
<label for="${id}">Markdown<input id="${id}" class="snippet" readonly value="${e(markdown)}"></label>`;
}

export function environmentsPage(viewer: Viewer, project: Project, environments: EnvironmentView[], publicUrl: string): string {
  const rows = environments
    .map(
      (
        env,
      ) => `<tr data-environment="${e(env.slug)}"><td><strong>${e(env.name)}</strong> <span class="muted">${e(env.slug)}</span>${env.is_disabled ? ' <span class="muted">(disabled)</span>' : ''}${editForm(env)}</td>
<td>${env.scheduled_trigger ? `<code>${e(env.scheduled_trigger)}</code>` : '<span class="muted">none</span>'}</td>
<td>${badge(project, env, publicUrl)}</td><td>${triggerForm(env)}</td></tr>`,
    )
    .join('');
  const create = formSection(
    'new-environment',
    'New environment',
    apiForm(
      'POST /api/environments',
      'reload',
      'Create',
      `<label for="new-name">Name<input id="new-name" name="name" required maxlength="200"></label>
<label for="new-slug">Slug<input id="new-slug" name="slug" required maxlength="100"></label>`,
    ),
  );
  const table =
    environments.length === 0
      ? '<p class="empty">No environment yet.</p>'
      : `<table><thead><tr><th scope="col">Environment</th><th scope="col">Schedule</th><th scope="col">Badge</th><th scope="col">Trigger</th></tr></thead><tbody>${rows}</tbody></table>`;
  return layout({
    title: `Environments · ${project.name}`,
    viewer,
    project,
    body: `<h1>Environments of ${e(project.name)}</h1>${table}${create}`,
    script: true,
  });
}
