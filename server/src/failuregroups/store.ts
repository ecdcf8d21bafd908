import { ADVISORY_LOCK, lockAdvisory, type Tx } from '../db.ts';
import type { MemberEvent } from './members.ts';
import { type FailedStep, type FailureCategory, failureCategory } from './category.ts';
import { failureGroupTitle, uniqueTitle } from './title.ts';

export interface Diagnosis {
  summary: string;
  category: string;
  author: string;
  created_at: string;
}

export interface FailureGroupRow {
  id: string;
  title: string;
  category: FailureCategory | null;
  status: 'open' | 'resolved' | 'ignored';
  diagnosis: Diagnosis | null;
  first_seen_at: Date;
  last_seen_at: Date;
  last_test_run_id: number | null;
  member_count: number;
  occurrence_count: number;
  created_at: Date;
  updated_at: Date;
  issue: LinkedIssue | null;
  /** The owners of its members (tests attached and not detached since), as their latest listings found them. */
  owners: string[];
}

/** The tracker issue a group is linked to: `tracker_links` is the trackers' table, read here so that every answer of a group carries it. */
export interface LinkedIssue {
  link_id: number;
  tracker: 'github' | 'gitlab' | 'jira' | 'linear';
  key: string | null;
  url: string | null;
  state: 'open' | 'closed' | null;
}

const columns = (sql: Tx) =>
  sql`id, title, category, status, diagnosis, first_seen_at, last_seen_at, last_test_run_id, member_count, occurrence_count, created_at, updated_at,
      (select jsonb_build_object('link_id', l.id, 'tracker', l.tracker, 'key', l.issue_key, 'url', l.issue_url, 'state', l.issue_state)
       from tracker_links l where l.project_id = failure_groups.project_id and l.subject_kind = 'failure_group' and l.subject_id = failure_groups.id) as issue,
      (select coalesce(array_agg(distinct o.owner order by o.owner), '{}') from test_cases tc cross join unnest(tc.owners) as o(owner)
       where tc.project_id = failure_groups.project_id and tc.id in (${members(sql)})) as owners`;

/** The ids of the group's members (attached, not detached since): for a `failure_groups` row in scope. */
const members = (sql: Tx) => sql`
  select e.test_case_id from failure_group_events e
  where e.project_id = failure_groups.project_id and e.group_id = failure_groups.id and e.kind = 'attach'
    and not exists (select 1 from failure_group_events d where d.project_id = e.project_id and d.group_id = e.group_id
                    and d.test_case_id = e.test_case_id and d.kind = 'detach' and d.id > e.id)`;

/**
 * The group's row, created on first sight with a title made from the failure and unique within the
 * project, locked for this transaction: writers to a group take turns.
 */
export async function lockGroup(sql: Tx, projectId: number, groupId: string, failure: FirstFailure, now: Date): Promise<void> {
  if (await lockExistingGroup(sql, projectId, groupId)) return;
  const title = await freeTitle(sql, projectId, failureGroupTitle(failure));
  const category = failureCategory({ message: failure.message, steps: failure.steps ?? [] });
  await sql`
    insert into failure_groups (project_id, id, title, category, first_seen_at, last_seen_at, created_at, updated_at)
    values (${projectId}, ${groupId}, ${title}, ${category}, ${now}, ${now}, ${now}, ${now})
    on conflict (project_id, id) do nothing`;
  await lockExistingGroup(sql, projectId, groupId);
}

/**
 * `title`, or `title (2)`, `(3)`… when another group of the project has it. Titles are taken one
 * at a time in a project (a lock held to the transaction's end), so that two new groups of one
 * failure text get two titles.
 */
async function freeTitle(sql: Tx, projectId: number, title: string): Promise<string> {
  await lockAdvisory(sql, ADVISORY_LOCK.groupTitles, projectId);
  const rows = await sql<{ title: string }[]>`
    select title from failure_groups
    where project_id = ${projectId} and (title = ${title} or left(title, ${title.length + 2}) = ${`${title} (`})`;
  return uniqueTitle(title, new Set(rows.map((row) => row.title)));
}

/** Renames a group; false when another group of the project holds the title. */
export async function renameGroup(sql: Tx, projectId: number, groupId: string, title: string, now: Date): Promise<'renamed' | 'taken' | 'missing'> {
  await lockAdvisory(sql, ADVISORY_LOCK.groupTitles, projectId);
  const [holder] = await sql<{ id: string }[]>`select id from failure_groups where project_id = ${projectId} and title = ${title}`;
  if (holder && holder.id !== groupId) return 'taken';
  const rows = await sql`update failure_groups set title = ${title}, updated_at = ${now} where project_id = ${projectId} and id = ${groupId} returning id`;
  return rows.length > 0 ? 'renamed' : 'missing';
}

export async function lockExistingGroup(sql: Tx, projectId: number, groupId: string): Promise<boolean> {
  const rows = await sql`select 1 from failure_groups where project_id = ${projectId} and id = ${groupId} for update`;
  return rows.length > 0;
}

/** Those of these groups the project does not have, in the order given. */
export async function missingGroups(sql: Tx, projectId: number, groupIds: string[]): Promise<string[]> {
  if (groupIds.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    select g.id from unnest(${groupIds}::text[]) with ordinality as g(id, n)
    where not exists (select 1 from failure_groups f where f.project_id = ${projectId} and f.id = g.id)
    order by g.n`;
  return rows.map((row) => row.id);
}

/** The project's titles lock, held to the transaction's end: titles are given one writer at a time. */
export async function lockGroupTitles(sql: Tx, projectId: number): Promise<void> {
  await lockAdvisory(sql, ADVISORY_LOCK.groupTitles, projectId);
}

/**
 * New groups, each from its first failure, in one statement: titled as `lockGroup` titles one,
 * unique within the project and among themselves (taken in the order given, under the project's
 * titles lock), a group made meanwhile by another transaction left as it is. Their rows stay
 * locked by this transaction, as inserted rows are.
 */
export async function createGroups(sql: Tx, projectId: number, groups: { id: string; failure: FirstFailure }[], now: Date): Promise<void> {
  if (groups.length === 0) return;
  await lockGroupTitles(sql, projectId);
  const wanted = groups.map((group) => failureGroupTitle(group.failure));
  const taken = await takenTitles(sql, projectId, [...new Set(wanted)]);
  const titles = wanted.map((title) => {
    const free = uniqueTitle(title, taken);
    taken.add(free);
    return free;
  });
  const categories = groups.map((group) => failureCategory({ message: group.failure.message, steps: group.failure.steps ?? [] }));
  await sql`
    insert into failure_groups (project_id, id, title, category, first_seen_at, last_seen_at, created_at, updated_at)
    select ${projectId}, g.id, g.title, g.category, ${now}, ${now}, ${now}, ${now}
    from unnest(${groups.map((group) => group.id)}::text[], ${titles}::text[], ${categories}::text[]) with ordinality as g(id, title, category, n)
    order by g.n
    on conflict (project_id, id) do nothing`;
}

/** A title's number, as `uniqueTitle` adds it: ` (2)` at its end. */
const NUMBERED_TITLE = String.raw` \(\d+\)$`;

/**
 * The project's titles that are one of `titles` or one of them numbered (`title (2)`): one pass
 * over the project's groups, matched by hash, however many titles are asked for.
 */
async function takenTitles(sql: Tx, projectId: number, titles: string[]): Promise<Set<string>> {
  const rows = await sql<{ title: string }[]>`
    with wanted as (select unnest(${titles}::text[]) as title)
    select g.title from failure_groups g join wanted w on w.title = g.title where g.project_id = ${projectId}
    union
    select g.title from failure_groups g join wanted w on w.title = regexp_replace(g.title, ${NUMBERED_TITLE}, '')
    where g.project_id = ${projectId} and g.title like '% (%)'`;
  return new Set(rows.map((row) => row.title));
}

/** Locks these groups, in id order (no two transactions lock two groups in opposite orders); how many there were. */
export async function lockGroups(sql: Tx, projectId: number, groupIds: string[]): Promise<number> {
  const rows = await sql`select id from failure_groups where project_id = ${projectId} and id = any(${groupIds}::text[]) order by id for update`;
  return rows.length;
}

export async function memberEvents(sql: Tx, projectId: number, groupId: string, testCaseId?: string): Promise<MemberEvent[]> {
  return sql<MemberEvent[]>`
    select test_case_id, kind, source, actor_id, test_run_id, environment_id, occurred_at
    from failure_group_events
    where project_id = ${projectId} and group_id = ${groupId} ${testCaseId ? sql`and test_case_id = ${testCaseId}` : sql``}
    order by id`;
}

export async function appendEvent(sql: Tx, projectId: number, groupId: string, event: MemberEvent): Promise<void> {
  await sql`
    insert into failure_group_events (project_id, group_id, test_case_id, kind, source, actor_id, test_run_id, environment_id, occurred_at)
    values (${projectId}, ${groupId}, ${event.test_case_id}, ${event.kind}, ${event.source}, ${event.actor_id}, ${event.test_run_id},
            ${event.environment_id}, ${event.occurred_at})`;
}

/** The member events of each (group, test) pair, in the log's order, by `${group}\u0000${test}`: one statement for many failures. */
export async function membersEvents(sql: Tx, projectId: number, pairs: { groupId: string; testCaseId: string }[]): Promise<Map<string, MemberEvent[]>> {
  const byPair = new Map<string, MemberEvent[]>();
  if (pairs.length === 0) return byPair;
  const rows = await sql<(MemberEvent & { group_id: string })[]>`
    select e.group_id, e.test_case_id, e.kind, e.source, e.actor_id, e.test_run_id, e.environment_id, e.occurred_at
    from failure_group_events e
    join unnest(${pairs.map((pair) => pair.groupId)}::text[], ${pairs.map((pair) => pair.testCaseId)}::text[]) as p(group_id, test_case_id)
      on e.group_id = p.group_id and e.test_case_id = p.test_case_id
    where e.project_id = ${projectId}
    order by e.id`;
  for (const { group_id: groupId, ...event } of rows) {
    const key = `${groupId}\u0000${event.test_case_id}`;
    const events = byPair.get(key);
    if (events) events.push(event);
    else byPair.set(key, [event]);
  }
  return byPair;
}

/** Appends events of one source, run and moment to groups' logs, in the order given: one statement. */
export async function appendEvents(
  sql: Tx,
  projectId: number,
  common: Omit<MemberEvent, 'test_case_id' | 'kind'>,
  events: { group_id: string; test_case_id: string; kind: MemberEvent['kind'] }[],
): Promise<void> {
  if (events.length === 0) return;
  await sql`
    insert into failure_group_events (project_id, group_id, test_case_id, kind, source, actor_id, test_run_id, environment_id, occurred_at)
    select ${projectId}, e.group_id, e.test_case_id, e.kind, ${common.source}, ${common.actor_id}::text, ${common.test_run_id}::int,
           ${common.environment_id}::int, ${common.occurred_at}
    from unnest(${events.map((e) => e.group_id)}::text[], ${events.map((e) => e.test_case_id)}::text[], ${events.map((e) => e.kind)}::text[])
         with ordinality as e(group_id, test_case_id, kind, n)
    order by e.n`;
}

/**
 * Moves groups' rollups by their sightings in one run, summed per group, under their row locks:
 * members now active change by `memberDelta`, each sighting adds an occurrence and is when and
 * where the group was seen last, and a resolved group seen again reopens. The log itself is never
 * re-read for this. One statement however many groups.
 */
export async function applySightings(
  sql: Tx,
  projectId: number,
  changes: { groupId: string; memberDelta: number; sightings: number }[],
  sighting: { at: Date; testRunId: number },
  now: Date,
): Promise<void> {
  if (changes.length === 0) return;
  await sql`
    update failure_groups g set
      member_count = g.member_count + c.member_delta,
      occurrence_count = g.occurrence_count + c.sightings,
      last_seen_at = greatest(g.last_seen_at, ${sighting.at}),
      last_test_run_id = ${sighting.testRunId}::int,
      status = case when g.status = 'resolved' then 'open' else g.status end,
      updated_at = ${now}
    from unnest(${changes.map((c) => c.groupId)}::text[], ${changes.map((c) => c.memberDelta)}::int[], ${changes.map((c) => c.sightings)}::int[])
         as c(group_id, member_delta, sightings)
    where g.project_id = ${projectId} and g.id = c.group_id and c.sightings > 0`;
}

/** A member detached by a person: the group's active members one fewer (under the group's row lock). */
export async function applyDetach(sql: Tx, projectId: number, groupId: string, now: Date): Promise<void> {
  await sql`update failure_groups set member_count = member_count - 1, updated_at = ${now} where project_id = ${projectId} and id = ${groupId}`;
}

export async function getGroup(sql: Tx, projectId: number, groupId: string): Promise<FailureGroupRow | null> {
  const [row] = await sql<FailureGroupRow[]>`select ${columns(sql)} from failure_groups where project_id = ${projectId} and id = ${groupId}`;
  return row ?? null;
}

export async function listGroups(
  sql: Tx,
  projectId: number,
  filter: { status?: string; owner?: string; limit: number; offset: number },
): Promise<{ rows: FailureGroupRow[]; total: number }> {
  const where = sql`project_id = ${projectId} ${filter.status ? sql`and status = ${filter.status}` : sql``}
    ${filter.owner ? sql`and exists (select 1 from test_cases tc where tc.project_id = ${projectId} and tc.owners @> ${[filter.owner]}::text[] and tc.id in (${members(sql)}))` : sql``}`;
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from failure_groups where ${where}`;
  const rows = await sql<FailureGroupRow[]>`
    select ${columns(sql)} from failure_groups where ${where} order by last_seen_at desc, id limit ${filter.limit} offset ${filter.offset}`;
  return { rows, total: count?.total ?? 0 };
}

export async function updateGroup(
  sql: Tx,
  projectId: number,
  groupId: string,
  patch: { status?: string; diagnosis?: Diagnosis },
  now: Date,
): Promise<FailureGroupRow | null> {
  const [row] = await sql<FailureGroupRow[]>`
    update failure_groups set
      status = coalesce(${patch.status ?? null}, status),
      diagnosis = coalesce(${patch.diagnosis ? sql.json(patch.diagnosis as unknown as Record<string, string>) : null}::jsonb, diagnosis),
      updated_at = ${now}
    where project_id = ${projectId} and id = ${groupId}
    returning ${columns(sql)}`;
  return row ?? null;
}

/** What a new group's title is made from: the failing test's final error in the run, where it failed, and the test. */
export interface FirstFailure {
  message: string | null;
  location: string | null;
  testTitle: string | null;
  steps: FailedStep[] | null;
}

/** `firstFailure` of each of these tests of the run, by test: one statement. */
export async function firstFailures(sql: Tx, runId: number, testCaseIds: string[]): Promise<Map<string, FirstFailure>> {
  if (testCaseIds.length === 0) return new Map();
  const rows = await sql<(FirstFailure & { test_case_id: string })[]>`
    select t.test_case_id, r.final_error_message as message, r.error_location as location, t.title as "testTitle", r.failed_steps as steps
    from test_run_tests t left join test_results r on r.test_run_id = t.test_run_id and r.test_case_id = t.test_case_id and r.is_final
    where t.test_run_id = ${runId} and t.test_case_id in (select unnest(${testCaseIds}::text[]))`;
  return new Map(rows.map(({ test_case_id: id, ...failure }) => [id, failure]));
}

export async function firstFailure(sql: Tx, runId: number, testCaseId: string): Promise<FirstFailure> {
  const [row] = await sql<FirstFailure[]>`
    select r.final_error_message as message, r.error_location as location, t.title as "testTitle", r.failed_steps as steps
    from test_run_tests t left join test_results r on r.test_run_id = t.test_run_id and r.test_case_id = t.test_case_id and r.is_final
    where t.test_run_id = ${runId} and t.test_case_id = ${testCaseId}`;
  return row ?? { message: null, location: null, testTitle: null, steps: null };
}

/** The groups a test has been a member of, most recently seen first. */
export async function groupsOfTest(sql: Tx, projectId: number, testCaseId: string): Promise<FailureGroupRow[]> {
  return sql<FailureGroupRow[]>`
    select ${columns(sql)} from failure_groups
    where project_id = ${projectId}
      and id in (select group_id from failure_group_events where project_id = ${projectId} and test_case_id = ${testCaseId})
    order by last_seen_at desc limit 50`;
}

/** The environment of the project's run; null when the run is none of the project's. */
export async function environmentOfRun(sql: Tx, projectId: number, runId: number): Promise<number | null> {
  const [run] = await sql<{ environment_id: number }[]>`select environment_id from test_runs where project_id = ${projectId} and id = ${runId}`;
  return run?.environment_id ?? null;
}

/** The shard's final results that name a failure group, in group and test order (the order groups are locked in). */
export async function groupedFailuresOfShard(sql: Tx, runId: number, shard: number): Promise<{ test_case_id: string; failure_group_id: string }[]> {
  return sql<{ test_case_id: string; failure_group_id: string }[]>`
    select test_case_id, failure_group_id from test_results
    where test_run_id = ${runId} and shard = ${shard} and is_final and failure_group_id is not null
    order by failure_group_id, test_case_id`;
}
