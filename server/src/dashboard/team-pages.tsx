import type { ListedKey } from '../auth/index.ts';
import type { Project } from '../projects/index.ts';
import { ROLES } from '../principals.ts';
import { mayCall } from './permissions.ts';
import type { ComponentChildren } from 'preact';
import { ApiForm, Field, FormSection, Options } from './components/forms.tsx';
import { renderHtml } from './components/html.ts';
import { renderPage, type Viewer } from './components/page.tsx';
import { Empty, Table } from './components/table.tsx';

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

function RoleSelect(props: { id: string; selected: string }) {
  return (
    <Field for={props.id} label="Role">
      <select id={props.id} name="role">
        <Options choices={ROLES.map((role) => [role, role] as const)} value={props.selected} />
      </select>
    </Field>
  );
}

function MemberLine(props: { member: MemberRow }) {
  const { member } = props;
  return (
    <tr data-member={member.email}>
      <td>{member.name}</td>
      <td>{member.email}</td>
      <td data-role="">{member.role}</td>
      <td>{member.joined_at.slice(0, 10)}</td>
      <td>
        <div class="actions">
          <ApiForm api={`PATCH /api/members/${member.user_id}`} then="reload" label="Change role">
            <RoleSelect id={`role-${member.user_id}`} selected={member.role} />
          </ApiForm>
          <ApiForm api={`DELETE /api/members/${member.user_id}`} then="reload" label="Remove" />
        </div>
      </td>
    </tr>
  );
}

function InvitationLine(props: { invitation: InvitationRow }) {
  const { invitation } = props;
  return (
    <tr data-invitation={invitation.email}>
      <td>{invitation.email}</td>
      <td>{invitation.role}</td>
      <td>{invitation.created_by ?? 'the command line'}</td>
      <td>{invitation.expires_at.slice(0, 10)}</td>
      <td>
        <ApiForm api={`DELETE /api/invitations/${invitation.id}`} then="reload" label="Withdraw" />
      </td>
    </tr>
  );
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
  return renderPage({
    title: `Members · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <h1>Members of {project.name}</h1>
        <p class="muted">
          Viewers read the project; members also report, trigger, snooze, triage and pin; admins also configure it and manage its keys and people.
        </p>
        <Table head={['Name', 'Email', 'Role', 'Joined', 'Actions']}>
          {view.members.map((member) => (
            <MemberLine member={member} />
          ))}
        </Table>
        {view.invitations.length === 0 ? null : (
          <>
            <h2>Invitations</h2>
            <Table head={['Email', 'Role', 'Invited by', 'Expires', 'Actions']}>
              {view.invitations.map((invitation) => (
                <InvitationLine invitation={invitation} />
              ))}
            </Table>
          </>
        )}
        <FormSection id="add-person" heading="Add a person" api="POST /api/members">
          <ApiForm api="POST /api/members" then="show-secret" label="Add">
            <Field for="person-email" label="Email">
              <input id="person-email" name="email" type="email" required size={30} />
            </Field>
            <RoleSelect id="person-role" selected="member" />
          </ApiForm>
        </FormSection>
        {!mayCall('POST /api/members') ? null : view.mail ? (
          <p class="muted" data-mail="sent">
            A person with an account joins at once. Anyone else is mailed an invitation link; it is also shown here once, should the mail not arrive.
          </p>
        ) : (
          <p class="muted" data-mail="none">
            A person with an account joins at once. This server sends no mail (its operator has not set <code>PROCTOR_SMTP_URL</code>): anyone else gets an
            invitation link, shown here once, for you to pass on.
          </p>
        )}
      </>
    ),
  });
}

/** What a key is for: its name, else its kind and the day it was made (a run's key: its run). */
function KeyLabel(props: { key_: ListedKey }) {
  const key = props.key_;
  if (key.name !== null) return <>{key.name}</>;
  const day = key.created_at.toISOString().slice(0, 10);
  const kind = key.test_run_id !== null ? `run #${key.test_run_number}'s key` : `${key.scope} key`;
  return (
    <span class="muted">
      {kind} of {day}
    </span>
  );
}

function KeyLine(props: { key_: ListedKey }) {
  const key = props.key_;
  const owner = key.test_run_id !== null ? `run #${key.test_run_number}` : (key.created_by?.name ?? 'the command line');
  return (
    <tr data-key={key.id}>
      <td data-name="">
        <KeyLabel key_={key} />
      </td>
      <td>
        <code>prc_p_{key.id}_…</code>
      </td>
      <td>{key.scope}</td>
      <td>{owner}</td>
      <td>{key.created_at.toISOString().slice(0, 10)}</td>
      <td>{key.last_used_at ? key.last_used_at.toISOString().slice(0, 16).replace('T', ' ') : <span class="muted">never</span>}</td>
      <td>
        <ApiForm api={`DELETE /api/keys/${key.id}`} then="reload" label="Revoke" />
      </td>
    </tr>
  );
}

export function keysPage(viewer: Viewer, project: Project, keys: ListedKey[]): string {
  return renderPage({
    title: `Keys · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <h1>Keys of {project.name}</h1>
        <p class="muted">A project's keys act as a machine (a CI): read reads, report also sends runs and results, admin does everything.</p>
        {/* The list is fetched again when a key is made (data-refresh): the new key is listed at once, its secret shown in the form. */}
        <div id="key-list" data-refresh="">
          {keys.length === 0 ? (
            <Empty>No key.</Empty>
          ) : (
            <Table head={['Name', 'Key', 'Scope', 'Made by', 'Made', 'Last used', 'Actions']}>
              {keys.map((key) => (
                <KeyLine key_={key} />
              ))}
            </Table>
          )}
        </div>
        <FormSection id="new-key" heading="New key" api="POST /api/keys">
          <ApiForm api="POST /api/keys" then="show-secret" label="Create key">
            <Field for="key-name" label="Name (what it is for)">
              <input id="key-name" name="name" maxlength={100} size={30} placeholder="CI on main" data-optional="" />
            </Field>
            <Field for="key-scope" label="Scope">
              <select id="key-scope" name="scope">
                <Options
                  choices={[
                    ['read', 'read'],
                    ['report', 'report'],
                    ['admin', 'admin'],
                  ]}
                  value="report"
                />
              </select>
            </Field>
          </ApiForm>
        </FormSection>
      </>
    ),
  });
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

function FieldName(props: { name: string }) {
  return props.name === '' ? null : (
    <>
      <span class="field">{props.name}</span>
      {': '}
    </>
  );
}

function FieldList(props: { items: ComponentChildren[]; empty: string }) {
  return props.items.length === 0 ? (
    <p class="muted">{props.empty}</p>
  ) : (
    <ul class="fields">
      {props.items.map((item) => (
        <li>{item}</li>
      ))}
    </ul>
  );
}

/**
 * What a change did, as fields a person reads: for an update, each field that changed as
 * `field: old → new`; for a creation, `field: value`; for a removal, what was there.
 */
export function ChangeFields(props: { before: unknown; after: unknown }) {
  const { before, after } = props;
  const has = (value: unknown) => value !== null && value !== undefined;
  if (!has(before) && !has(after)) return null;
  if (has(before) && has(after)) {
    const old = fieldsOf(before);
    const now = fieldsOf(after);
    const names = [...new Set([...old.keys(), ...now.keys()])].filter((name) => shown(old.get(name)) !== shown(now.get(name)));
    return (
      <FieldList
        empty="no field changed"
        items={names.map((name) => (
          <>
            <FieldName name={name} />
            <del>{shown(old.get(name))}</del> → <ins>{shown(now.get(name))}</ins>
          </>
        ))}
      />
    );
  }
  const side = has(after) ? after : before;
  return (
    <>
      {has(after) ? null : <p class="muted">removed:</p>}
      <FieldList
        empty="no fields"
        items={[...fieldsOf(side)].map(([name, value]) => (
          <>
            <FieldName name={name} />
            {shown(value)}
          </>
        ))}
      />
    </>
  );
}

/** ChangeFields as HTML. */
export function changeFields(before: unknown, after: unknown): string {
  return renderHtml(<ChangeFields before={before} after={after} />);
}

export function auditPage(viewer: Viewer, project: Project, view: { events: EventRow[]; action: string | undefined; page: number; pages: number }): string {
  return renderPage({
    title: `Audit · ${project.name}`,
    viewer,
    project,
    children: (
      <>
        <h1>Audit trail of {project.name}</h1>
        <form class="filters" method="get">
          <Field for="audit-action" label="Action">
            <input id="audit-action" name="action" value={view.action ?? ''} placeholder="member, key.created…" />
          </Field>
          <button type="submit">Filter</button>
        </form>
        {view.events.length === 0 ? (
          <Empty>No change recorded.</Empty>
        ) : (
          <Table head={['When (UTC)', 'Who', 'What', 'To what', 'Change']}>
            {view.events.map((event) => (
              <tr>
                <td>{event.at.slice(0, 19).replace('T', ' ')}</td>
                <td>{event.actor.name}</td>
                <td>
                  <code>{event.action}</code>
                </td>
                <td>{event.target}</td>
                <td class="change">
                  <ChangeFields before={event.before} after={event.after} />
                </td>
              </tr>
            ))}
          </Table>
        )}
        {view.page < view.pages ? (
          <p>
            <a href={`?page=${view.page + 1}${view.action ? `&action=${encodeURIComponent(view.action)}` : ''}`}>Older changes</a>
          </p>
        ) : null}
      </>
    ),
  });
}
