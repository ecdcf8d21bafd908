import type { FailureGroupRow } from '../failuregroups/index.ts';
import type { Project } from '../projects/index.ts';
import { escapeXml as e } from '../xml.ts';
import { apiForm } from './forms.ts';
import { layout, type Viewer } from './layout.ts';

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

const when = (date: Date | string) => new Date(date).toISOString().slice(0, 16).replace('T', ' ');
const groupPath = (project: Project, id: string) => `/projects/${project.id}/failure-groups/${encodeURIComponent(id)}`;

export function groupsPage(viewer: Viewer, project: Project, groups: FailureGroupRow[], status: GroupStatus | undefined): string {
  const tabs = [
    `${status ? '<a href="?">all</a>' : '<strong aria-current="page">all</strong>'}`,
    ...STATUSES.map((s) => (s === status ? `<strong aria-current="page">${s}</strong>` : `<a href="?status=${s}">${s}</a>`)),
  ].join(' · ');
  const rows = groups
    .map(
      (
        g,
      ) => `<tr data-group="${e(g.id)}"><td><a href="${e(groupPath(project, g.id))}">${e(g.title)}</a><div class="muted"><code>${e(g.id)}</code>${g.diagnosis ? ` · ${e(g.diagnosis.category)}: ${e(g.diagnosis.summary)}` : ''}</div></td>
<td>${e(g.status)}</td><td>${g.member_count}</td><td>${g.occurrence_count}</td><td class="muted">${when(g.last_seen_at)}</td></tr>`,
    )
    .join('');
  const table =
    groups.length === 0
      ? '<p class="empty">No failure group here.</p>'
      : `<table><thead><tr><th scope="col">Failure group</th><th scope="col">Status</th><th scope="col">Tests</th><th scope="col">Seen</th><th scope="col">Last seen (UTC)</th></tr></thead><tbody>${rows}</tbody></table>`;
  return layout({
    title: `Failure groups · ${project.name}`,
    viewer,
    project,
    body: `<h1>Failure groups of ${e(project.name)}</h1><nav aria-label="Which groups"><p>${tabs}</p></nav>${table}`,
  });
}

/** `runNumbers`: the numbers of the members' last runs, by id (what the page names them by). */
export function groupPage(
  viewer: Viewer,
  project: Project,
  group: FailureGroupRow,
  members: MemberView[],
  titles: Map<string, string>,
  runNumbers: Map<number, number>,
): string {
  const api = `/api/failure-groups/${encodeURIComponent(group.id)}`;
  const statusOptions = STATUSES.map((s) => `<option value="${s}"${s === group.status ? ' selected' : ''}>${s}</option>`).join('');
  const triage = `<section class="create" aria-labelledby="triage"><h2 id="triage">Triage</h2>
${apiForm(`PATCH ${api}`, 'reload', 'Rename', `<label for="group-title">Title<input id="group-title" name="title" required maxlength="200" size="60" value="${e(group.title)}"></label>`)}
${apiForm(`PATCH ${api}`, 'reload', 'Set status', `<label for="group-status">Status<select id="group-status" name="status">${statusOptions}</select></label>`)}
${apiForm(
  `PATCH ${api}`,
  'reload',
  'Set diagnosis',
  `<label for="diagnosis-category">Category<input id="diagnosis-category" name="diagnosis.category" required maxlength="100" value="${e(group.diagnosis?.category ?? '')}" placeholder="product bug, test bug, environment..."></label>
<label for="diagnosis-summary">Summary<input id="diagnosis-summary" name="diagnosis.summary" required maxlength="10000" size="50" value="${e(group.diagnosis?.summary ?? '')}"></label>`,
)}</section>`;
  const rows = members
    .map((m) => {
      const detach = m.state === 'active' ? apiForm(`DELETE ${api}/members/${encodeURIComponent(m.test_case_id)}`, 'reload', 'Detach') : '';
      const number = m.last_test_run_id === null ? undefined : runNumbers.get(m.last_test_run_id);
      // A run the retention policy deleted is named by nothing.
      const lastRun = m.last_test_run_id && number !== undefined ? `<a href="/projects/${project.id}/runs/${m.last_test_run_id}">#${number}</a>` : '';
      return `<tr data-member="${e(m.test_case_id)}"><td>${e(titles.get(m.test_case_id) ?? m.test_case_id)}</td><td>${e(m.state)}${m.source === 'human' ? ' (by a person)' : ''}</td>
<td>${m.sighting_count}</td><td>${lastRun} <span class="muted">${when(m.last_seen_at)}</span></td><td>${detach}</td></tr>`;
    })
    .join('');
  const diagnosis = group.diagnosis
    ? `<p><strong>${e(group.diagnosis.category)}</strong>: ${e(group.diagnosis.summary)} <span class="muted">(${when(group.diagnosis.created_at)})</span></p>`
    : '<p class="muted">No diagnosis yet.</p>';
  const body = `<h1>${e(group.title)}</h1><p class="muted"><code>${e(group.id)}</code> · ${e(group.status)} · seen ${group.occurrence_count} times, first ${when(group.first_seen_at)}, last ${when(group.last_seen_at)}</p>
${diagnosis}${triage}
<h2>Tests (${members.length})</h2><table><thead><tr><th scope="col">Test</th><th scope="col">State</th><th scope="col">Seen</th><th scope="col">Last run</th><th scope="col">Action</th></tr></thead><tbody>${rows}</tbody></table>`;
  return layout({ title: `${group.title} · ${project.name}`, viewer, project, body, script: true });
}
