import { randomUUID } from 'node:crypto';
import type { Tx } from '../db.ts';
import type { PutTrackerSettings, SubjectKind, TrackerLink, TrackerSettings } from './schema.ts';

export type TrackerName = TrackerLink['tracker'];

// The one module that writes `tracker_settings` and `tracker_links`. The outbox of actions on the
// links' issues is outbox-store.ts's.

/** The settings as the trackers need them: with the write-only Jira token and Linear key. */
export interface SettingsRow {
  project_id: number;
  tracker: 'destination' | 'jira' | 'linear';
  destination_id: number | null;
  jira_url: string | null;
  jira_project: string | null;
  jira_issue_type: string | null;
  jira_email: string | null;
  jira_token: string | null;
  linear_api_key: string | null;
  linear_team: string | null;
  default_branch: string;
  create_for_new_groups: boolean;
  create_for_flaky_tests: boolean;
  create_for_broken_tests: boolean;
  broken_after_failures: number;
  when_closed_failing: 'reopen' | 'comment';
  passes_to_resolve: number;
  close_when_resolved: boolean;
  /** The destination's type, when the tracker is one. */
  destination_type: string | null;
  updated_at: Date;
}

export const settingsColumns = (sql: Tx) => sql`
  s.project_id, s.tracker, s.destination_id, s.jira_url, s.jira_project, s.jira_issue_type, s.jira_email, s.jira_token, s.linear_api_key, s.linear_team,
  s.default_branch, s.create_for_new_groups, s.create_for_flaky_tests, s.create_for_broken_tests, s.broken_after_failures, s.when_closed_failing, s.passes_to_resolve, s.close_when_resolved,
  (select d.type from notification_destinations d where d.id = s.destination_id) as destination_type, s.updated_at`;

export async function getSettings(sql: Tx, projectId: number): Promise<SettingsRow | null> {
  const [row] = await sql<SettingsRow[]>`select ${settingsColumns(sql)} from tracker_settings s where s.project_id = ${projectId}`;
  return row ?? null;
}

/** A Jira site's base URL as stored: without a trailing slash. */
export const jiraSite = (url: string) => url.replace(/\/+$/, '');

/** The settings as stored: a Jira token or a Linear key left out is the one stored before (service.ts checks there is one); the other tracker's is dropped. */
export async function putSettings(sql: Tx, projectId: number, given: PutTrackerSettings, now: Date): Promise<SettingsRow> {
  const tracker = given.jira ? 'jira' : given.linear ? 'linear' : 'destination';
  const jira = given.jira ?? null;
  const linear = given.linear ?? null;
  await sql`
    insert into tracker_settings (project_id, tracker, destination_id, jira_url, jira_project, jira_issue_type, jira_email, jira_token, linear_api_key, linear_team,
                                  default_branch, create_for_new_groups, create_for_flaky_tests, create_for_broken_tests, broken_after_failures,
                                  when_closed_failing, passes_to_resolve, close_when_resolved, updated_at)
    values (${projectId}, ${tracker}, ${given.destination_id ?? null}, ${jira ? jiraSite(jira.url) : null}, ${jira?.project_key ?? null},
            ${jira?.issue_type ?? null}, ${jira?.email ?? null},
            ${
              jira
                ? sql`coalesce(${jira.api_token ?? null}, (select jira_token from tracker_settings
                       where project_id = ${projectId} and jira_url = ${jiraSite(jira.url)} and jira_email is not distinct from ${jira.email ?? null}))`
                : null
            },
            ${linear ? sql`coalesce(${linear.api_key ?? null}, (select linear_api_key from tracker_settings where project_id = ${projectId}))` : null},
            ${linear?.team_id ?? null},
            ${given.default_branch}, ${given.create_for_new_groups}, ${given.create_for_flaky_tests},
            ${given.create_for_broken_tests}, ${given.broken_after_failures},
            ${given.when_closed_failing}, ${given.passes_to_resolve}, ${given.close_when_resolved}, ${now})
    on conflict (project_id) do update set tracker = excluded.tracker, destination_id = excluded.destination_id,
      jira_url = excluded.jira_url, jira_project = excluded.jira_project, jira_issue_type = excluded.jira_issue_type, jira_email = excluded.jira_email,
      jira_token = excluded.jira_token, linear_api_key = excluded.linear_api_key,
      linear_team = excluded.linear_team, default_branch = excluded.default_branch,
      create_for_new_groups = excluded.create_for_new_groups, create_for_flaky_tests = excluded.create_for_flaky_tests,
      create_for_broken_tests = excluded.create_for_broken_tests, broken_after_failures = excluded.broken_after_failures,
      when_closed_failing = excluded.when_closed_failing, passes_to_resolve = excluded.passes_to_resolve,
      close_when_resolved = excluded.close_when_resolved, updated_at = excluded.updated_at`;
  return (await getSettings(sql, projectId)) as SettingsRow;
}

export async function deleteSettings(sql: Tx, projectId: number): Promise<boolean> {
  return (await sql`delete from tracker_settings where project_id = ${projectId} returning project_id`).length > 0;
}

/** The tracker a link made now goes to. */
export function trackerOfSettings(row: SettingsRow): TrackerName | null {
  if (row.tracker !== 'destination') return row.tracker;
  return row.destination_type === 'github' || row.destination_type === 'gitlab' ? row.destination_type : null;
}

/** What the API shows of the settings: never the Jira token or the Linear key. */
export function presentSettings(row: SettingsRow): TrackerSettings {
  return {
    tracker: trackerOfSettings(row) ?? 'github',
    destination_id: row.destination_id,
    jira:
      row.tracker === 'jira'
        ? {
            url: row.jira_url ?? '',
            project_key: row.jira_project ?? '',
            issue_type: row.jira_issue_type ?? '',
            email: row.jira_email,
            has_token: row.jira_token !== null,
          }
        : null,
    linear: row.tracker === 'linear' ? { team_id: row.linear_team ?? '', has_api_key: row.linear_api_key !== null } : null,
    default_branch: row.default_branch,
    create_for_new_groups: row.create_for_new_groups,
    create_for_flaky_tests: row.create_for_flaky_tests,
    create_for_broken_tests: row.create_for_broken_tests,
    broken_after_failures: row.broken_after_failures,
    when_closed_failing: row.when_closed_failing,
    passes_to_resolve: row.passes_to_resolve,
    close_when_resolved: row.close_when_resolved,
    updated_at: row.updated_at.toISOString(),
  };
}

export interface LinkRow {
  id: number;
  project_id: number;
  subject_kind: SubjectKind;
  subject_id: string;
  destination_id: number | null;
  tracker: TrackerName;
  origin: 'created' | 'linked' | 'rule';
  marker: string;
  issue_key: string | null;
  issue_url: string | null;
  issue_state: 'open' | 'closed' | null;
  noted_closed_at: Date | null;
  state_read_at: Date | null;
  passes: number;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  last_action: TrackerLink['last_action'];
}

const linkColumns = (sql: Tx) => sql`
  l.id::int as id, l.project_id, l.subject_kind, l.subject_id, l.destination_id, l.tracker, l.origin, l.marker::text as marker, l.issue_key, l.issue_url,
  l.issue_state, l.noted_closed_at, l.state_read_at, l.passes, l.created_by, l.created_at, l.updated_at,
  (select jsonb_build_object('kind', a.kind, 'state', a.state, 'attempts', a.attempts, 'last_error', a.last_error)
   from tracker_actions a where a.link_id = l.id order by a.id desc limit 1) as last_action`;

export function presentLink(row: LinkRow): TrackerLink {
  return {
    id: row.id,
    subject_kind: row.subject_kind,
    subject_id: row.subject_id,
    tracker: row.tracker,
    origin: row.origin,
    issue_key: row.issue_key,
    issue_url: row.issue_url,
    issue_state: row.issue_state,
    state_read_at: row.state_read_at?.toISOString() ?? null,
    passes: row.passes,
    last_action: row.last_action,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export interface NewLink {
  subjectKind: SubjectKind;
  subjectId: string;
  destinationId: number | null;
  tracker: TrackerName;
  origin: LinkRow['origin'];
  issue: { key: string; url: string | null } | null;
  createdBy: string | null;
}

/** A link of the subject, made unless it has one: null when it had (a rule leaves it be; the API says 409). */
export async function insertLink(sql: Tx, projectId: number, link: NewLink, now: Date): Promise<LinkRow | null> {
  const [made] = await sql<{ id: number }[]>`
    insert into tracker_links (project_id, subject_kind, subject_id, destination_id, tracker, origin, marker, issue_key, issue_url, created_by, created_at, updated_at)
    values (${projectId}, ${link.subjectKind}, ${link.subjectId}, ${link.destinationId}, ${link.tracker}, ${link.origin}, ${randomUUID()},
            ${link.issue?.key ?? null}, ${link.issue?.url ?? null}, ${link.createdBy}, ${now}, ${now})
    on conflict (project_id, subject_kind, subject_id) do nothing
    returning id::int as id`;
  return made ? getLink(sql, projectId, made.id) : null;
}

export async function getLink(sql: Tx, projectId: number, id: number): Promise<LinkRow | null> {
  const [row] = await sql<LinkRow[]>`select ${linkColumns(sql)} from tracker_links l where l.project_id = ${projectId} and l.id = ${id}`;
  return row ?? null;
}

export async function linkOf(sql: Tx, projectId: number, kind: SubjectKind, subjectId: string): Promise<LinkRow | null> {
  const [row] = await sql<LinkRow[]>`
    select ${linkColumns(sql)} from tracker_links l where l.project_id = ${projectId} and l.subject_kind = ${kind} and l.subject_id = ${subjectId}`;
  return row ?? null;
}

export async function listLinks(
  sql: Tx,
  projectId: number,
  filter: { kind?: SubjectKind; subjectId?: string; limit: number; offset: number },
): Promise<{ rows: LinkRow[]; total: number }> {
  const where = sql`l.project_id = ${projectId}
    ${filter.kind ? sql`and l.subject_kind = ${filter.kind}` : sql``} ${filter.subjectId ? sql`and l.subject_id = ${filter.subjectId}` : sql``}`;
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from tracker_links l where ${where}`;
  const rows = await sql<
    LinkRow[]
  >`select ${linkColumns(sql)} from tracker_links l where ${where} order by l.id desc limit ${filter.limit} offset ${filter.offset}`;
  return { rows, total: count?.total ?? 0 };
}

export async function deleteLink(sql: Tx, projectId: number, id: number): Promise<boolean> {
  return (await sql`delete from tracker_links where project_id = ${projectId} and id = ${id} returning id`).length > 0;
}

/** The project's links that have (or are getting) an issue, locked while a run's outcomes move them. */
export async function lockLinks(sql: Tx, projectId: number): Promise<LinkRow[]> {
  return sql<LinkRow[]>`
    select ${linkColumns(sql)} from tracker_links l where l.project_id = ${projectId} order by l.id for update of l`;
}

export async function setPasses(sql: Tx, id: number, passes: number, now: Date): Promise<void> {
  await sql`update tracker_links set passes = ${passes}, updated_at = ${now} where id = ${id}`;
}

/** What the tracker answered of the issue: its key and URL once created, its state when read or set. */
export async function recordIssue(
  sql: Tx,
  id: number,
  issue: { key?: string; url?: string; state?: 'open' | 'closed'; notedClosedAt?: Date | null },
  now: Date,
): Promise<void> {
  await sql`
    update tracker_links set
      issue_key = coalesce(${issue.key ?? null}, issue_key),
      issue_url = coalesce(${issue.url ?? null}, issue_url),
      issue_state = coalesce(${issue.state ?? null}, issue_state),
      state_read_at = ${issue.state ? now : sql`state_read_at`},
      noted_closed_at = ${issue.notedClosedAt === undefined ? sql`noted_closed_at` : issue.notedClosedAt},
      updated_at = ${now}
    where id = ${id}`;
}

/** The test's link, for the test page: its state as last read. */
export async function issueOfTest(sql: Tx, projectId: number, testCaseId: string): Promise<LinkRow | null> {
  return linkOf(sql, projectId, 'test', testCaseId);
}

/** Whether the project has the failure group, or the test. */
export async function subjectExists(sql: Tx, projectId: number, kind: SubjectKind, id: string): Promise<boolean> {
  const rows =
    kind === 'failure_group'
      ? await sql`select 1 from failure_groups where project_id = ${projectId} and id = ${id}`
      : await sql`select 1 from test_cases where project_id = ${projectId} and id = ${id}`;
  return rows.length > 0;
}
