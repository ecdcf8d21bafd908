import type { ListedKey } from '../auth/index.ts';
import type { Project } from '../projects/index.ts';
import { ROLES } from '../principals.ts';
import { escapeXml as e } from '../xml.ts';
import { apiForm, formSection } from './forms.ts';
import { layout, type Viewer } from './layout.ts';

// The people of a project, its keys, and what was changed: managed by its admins, read by all.

interface MemberRow {
  user_id: string;
  email: string;
  name: string;
  role: string;
  joined_at: string;
}

interface InvitationRow {
  id: number;
  email: string;
  role: string;
  created_by: string | null;
  expires_at: string;
}

function roleSelect(id: string, selected: string): string {
  return `<label for="${id}">Role<select id="${id}" name="role">${ROLES.map((role) => `<option value="${role}"${role === selected ? ' selected' : ''}>${role}</option>`).join('')}</select></label>`;
}

function memberRow(member: MemberRow): string {
  const id = `role-${member.user_id}`;
  const change = apiForm(`PATCH /api/members/${member.user_id}`, 'reload', 'Change role', roleSelect(id, member.role));
  const remove = apiForm(`DELETE /api/members/${member.user_id}`, 'reload', 'Remove');
  return `<tr data-member="${e(member.email)}"><td>${e(member.name)}</td><td>${e(member.email)}</td><td data-role>${e(member.role)}</td><td>${e(member.joined_at.slice(0, 10))}</td>
<td><div class="actions">${change}${remove}</div></td></tr>`;
}

function invitationRow(invitation: InvitationRow): string {
  return `<tr data-invitation="${e(invitation.email)}"><td>${e(invitation.email)}</td><td>${e(invitation.role)}</td><td>${e(invitation.created_by ?? 'the command line')}</td><td>${e(invitation.expires_at.slice(0, 10))}</td>
<td>${apiForm(`DELETE /api/invitations/${invitation.id}`, 'reload', 'Withdraw')}</td></tr>`;
}

export function membersPage(
  viewer: Viewer,
  project: Project,
  view: {
    members: MemberRow[];
    invitations: InvitationRow[];
    /** Whether the server mails invitations (PROCTOR_SMTP_URL). */
    mail: boolean;
  },
): string {
  const members = `<table><thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Joined</th><th scope="col">Actions</th></tr></thead>
<tbody>${view.members.map(memberRow).join('')}</tbody></table>`;
  const invitations =
    view.invitations.length === 0
      ? ''
      : `<h2>Invitations</h2><table><thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Invited by</th><th scope="col">Expires</th><th scope="col">Actions</th></tr></thead>
<tbody>${view.invitations.map(invitationRow).join('')}</tbody></table>`;
  const add = formSection(
    'add-person',
    'Add a person',
    apiForm(
      'POST /api/members',
      'show-secret',
      'Add',
      `<label for="person-email">Email<input id="person-email" name="email" type="email" required size="30"></label>${roleSelect('person-role', 'member')}`,
    ),
  );
  const howInvited = view.mail
    ? '<p class="muted" data-mail="sent">A person with an account joins at once. Anyone else is mailed an invitation link; it is also shown here once, should the mail not arrive.</p>'
    : '<p class="muted" data-mail="none">A person with an account joins at once. This server sends no mail (its operator has not set <code>PROCTOR_SMTP_URL</code>): anyone else gets an invitation link, shown here once, for you to pass on.</p>';
  const body = `<h1>Members of ${e(project.name)}</h1>
<p class="muted">Viewers read the project; members also report, trigger, snooze, triage and pin; admins also configure it and manage its keys and people.</p>
${members}${invitations}${add ? `${add}${howInvited}` : ''}`;
  return layout({ title: `Members · ${project.name}`, viewer, project, body, script: true });
}

/** What a key is for: its name, else its kind and the day it was made (a run's key: its run). */
function keyLabel(key: ListedKey): string {
  if (key.name !== null) return e(key.name);
  const day = key.created_at.toISOString().slice(0, 10);
  const kind = key.test_run_id !== null ? `run #${key.test_run_number}'s key` : `${key.scope} key`;
  return `<span class="muted">${e(kind)} of ${day}</span>`;
}

function keyRow(key: ListedKey): string {
  const owner = key.test_run_id !== null ? `run #${key.test_run_number}` : (key.created_by?.name ?? 'the command line');
  return `<tr data-key="${e(key.id)}"><td data-name>${keyLabel(key)}</td><td><code>prc_p_${e(key.id)}_…</code></td><td>${e(key.scope)}</td><td>${e(owner)}</td><td>${e(key.created_at.toISOString().slice(0, 10))}</td>
<td>${key.last_used_at ? e(key.last_used_at.toISOString().slice(0, 16).replace('T', ' ')) : '<span class="muted">never</span>'}</td>
<td>${apiForm(`DELETE /api/keys/${key.id}`, 'reload', 'Revoke')}</td></tr>`;
}

export function keysPage(viewer: Viewer, project: Project, keys: ListedKey[]): string {
  const table =
    keys.length === 0
      ? '<p class="empty">No key.</p>'
      : `<table><thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Scope</th><th scope="col">Made by</th><th scope="col">Made</th><th scope="col">Last used</th><th scope="col">Actions</th></tr></thead>
<tbody>${keys.map(keyRow).join('')}</tbody></table>`;
  const fields = `<label for="key-name">Name (what it is for)<input id="key-name" name="name" maxlength="100" size="30" placeholder="CI on main" data-optional></label>
<label for="key-scope">Scope<select id="key-scope" name="scope"><option value="read">read</option><option value="report" selected>report</option><option value="admin">admin</option></select></label>`;
  const create = formSection('new-key', 'New key', apiForm('POST /api/keys', 'show-secret', 'Create key', fields));
  // The list is fetched again when a key is made (data-refresh): the new key is listed at once, its secret shown in the form.
  const body = `<h1>Keys of ${e(project.name)}</h1><p class="muted">A project's keys act as a machine (a CI): read reads, report also sends runs and results, admin does everything.</p><div id="key-list" data-refresh>${table}</div>${create}`;
  return layout({ title: `Keys · ${project.name}`, viewer, project, body, script: true });
}

interface EventRow {
  at: string;
  actor: { kind: string; name: string };
  action: string;
  target: string;
  before: unknown;
  after: unknown;
}

/** A value as one line of text: nested objects flattened by changeFields, lists joined. */
function shown(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map(shown).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  if (typeof value === 'string') return value === '' ? '""' : value;
  return String(value);
}

/** An object's fields as `field` → value, nested objects as `field.sub`; a value that is no object as one unnamed field. */
function fieldsOf(value: unknown, prefix = ''): Map<string, unknown> {
  const fields = new Map<string, unknown>();
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    fields.set(prefix, value);
    return fields;
  }
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (inner !== null && typeof inner === 'object' && !Array.isArray(inner) && Object.keys(inner).length > 0) {
      for (const [sub, v] of fieldsOf(inner, name)) fields.set(sub, v);
    } else fields.set(name, inner);
  }
  return fields;
}

const fieldName = (name: string) => (name === '' ? '' : `<span class="field">${e(name)}</span>: `);

/**
 * What a change did, as fields a person reads: for an update, each field that changed as
 * `field: old → new`; for a creation, `field: value`; for a removal, what was there. Escaped.
 */
export function changeFields(before: unknown, after: unknown): string {
  const has = (value: unknown) => value !== null && value !== undefined;
  if (!has(before) && !has(after)) return '';
  const list = (items: string[], label: string) =>
    items.length === 0 ? `<p class="muted">${label}</p>` : `<ul class="fields">${items.map((item) => `<li>${item}</li>`).join('')}</ul>`;
  if (has(before) && has(after)) {
    const old = fieldsOf(before);
    const now = fieldsOf(after);
    const names = [...new Set([...old.keys(), ...now.keys()])].filter((name) => shown(old.get(name)) !== shown(now.get(name)));
    return list(
      names.map((name) => `${fieldName(name)}<del>${e(shown(old.get(name)))}</del> → <ins>${e(shown(now.get(name)))}</ins>`),
      'no field changed',
    );
  }
  const side = has(after) ? after : before;
  const items = [...fieldsOf(side)].map(([name, value]) => `${fieldName(name)}${e(shown(value))}`);
  return `${has(after) ? '' : '<p class="muted">removed:</p>'}${list(items, 'no fields')}`;
}

export function auditPage(viewer: Viewer, project: Project, view: { events: EventRow[]; action: string | undefined; page: number; pages: number }): string {
  const rows = view.events
    .map(
      (event) =>
        `<tr><td>${e(event.at.slice(0, 19).replace('T', ' '))}</td><td>${e(event.actor.name)}</td><td><code>${e(event.action)}</code></td><td>${e(event.target)}</td><td class="change">${changeFields(event.before, event.after)}</td></tr>`,
    )
    .join('');
  const table =
    view.events.length === 0
      ? '<p class="empty">No change recorded.</p>'
      : `<table><thead><tr><th scope="col">When (UTC)</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">To what</th><th scope="col">Change</th></tr></thead><tbody>${rows}</tbody></table>`;
  const filter = `<form class="filters" method="get"><label for="audit-action">Action<input id="audit-action" name="action" value="${e(view.action ?? '')}" placeholder="member, key.created…"></label><button type="submit">Filter</button></form>`;
  const more =
    view.page < view.pages ? `<p><a href="?page=${view.page + 1}${view.action ? `&action=${encodeURIComponent(view.action)}` : ''}">Older changes</a></p>` : '';
  const body = `<h1>Audit trail of ${e(project.name)}</h1>${filter}${table}${more}`;
  return layout({ title: `Audit · ${project.name}`, viewer, project, body });
}
