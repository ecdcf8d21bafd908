import { escapeLike, type Tx } from '../db.ts';
import { parseTagList } from './tags.ts';
import type { ListedTest, TestCaseListQuery } from './schema.ts';

export type { ListedTest } from './schema.ts';

export interface TestCaseRow {
  id: string;
  name: string;
  file_path: string;
  suites: string[];
  runner_project: string;
  tags: string[];
  created_at: Date;
  updated_at: Date;
  first_seen_commit_sha: string | null;
  last_seen_commit_sha: string | null;
}

const columns = (sql: Tx) => sql`id, name, file_path, suites, runner_project, tags, created_at, updated_at, first_seen_commit_sha, last_seen_commit_sha`;

/**
 * The test cases as they read: a test's last seen commit is its listing's (else its own, written
 * when it last joined a listing), its updated_at the later of its own and its listing's last
 * sighting (migration 048). Named `test_cases`, for the queries that read it as the table; a
 * subquery PostgreSQL folds into them (the table's indexes serve their filters and order).
 */
const testCasesAsRead = (sql: Tx) => sql`(
  select t.project_id, t.id, t.name, t.file_path, t.suites, t.runner_project, t.tags, t.line, t.is_active, t.created_at,
         greatest(t.updated_at, l.seen_at) as updated_at, t.first_seen_commit_sha,
         coalesce(l.commit_sha, t.last_seen_commit_sha) as last_seen_commit_sha
  from test_cases t left join test_case_listings l on l.id = t.listing_id) as test_cases`;

/** What the tests of one file (and runner project) of a listing come to: the read before the writes. */
interface ListedGroup {
  runner_project: string;
  file_path: string;
  /** The listing its known tests point to; null for new tests and tests in none. */
  listing: string | null;
  /** Its tests in this listing, known or not. */
  listed: number;
  /** Of them, those whose row differs from the listing's (title, place, tags, active, first commit). */
  changed: number;
  /** The tests pointing to `listing`, listed or not. */
  members: number;
}

/**
 * Adds or refreshes the listed tests in the project's inventory. A build that lists every test of
 * a listing (migration 048) again advances the listing's row, not its tests': only new tests,
 * tests whose row differs, and tests that leave a listing not listed whole (they join a new one,
 * one per file) are written. Unchanged, the usual build writes one row per file it lists.
 */
export async function upsertTestCases(sql: Tx, projectId: number, tests: ListedTest[], commit: string | null, now: Date): Promise<void> {
  if (tests.length === 0) return;
  // Lists of titles as one text each, split in the statement: a subquery per row and list to read
  // them from JSON arrays costs PostgreSQL a third of the statement at 100,000 tests.
  const rows = tests.map((t) => ({
    id: t.id,
    name: t.title,
    file_path: t.file_path,
    suites: joinList(t.suites),
    runner_project: t.runner_project,
    tags: joinList(t.tags),
    line: t.line,
    column: t.column,
  }));
  const groups = await sql<ListedGroup[]>`
    select x.runner_project, x.file_path, tc.listing_id::text as listing, count(*)::int as listed,
           count(*) filter (where ${differs(sql, 'tc', commit)})::int as changed,
           coalesce((select count(*) from test_cases m where m.listing_id = tc.listing_id), 0)::int as members
    from jsonb_to_recordset(${sql.json(rows)}) as x(id text, name text, file_path text, suites text, runner_project text, tags text, line int, "column" int)
    left join test_cases tc on tc.project_id = ${projectId} and tc.id = x.id
    group by x.runner_project, x.file_path, tc.listing_id`;
  // A listing all of whose tests are listed here (tests only ever leave a listing once it is made,
  // so the ones it has when it is advanced were all listed).
  const listedOf = new Map<string, { listed: number; members: number }>();
  for (const group of groups) {
    if (group.listing === null) continue;
    const seen = listedOf.get(group.listing) ?? { listed: 0, members: group.members };
    seen.listed += group.listed;
    listedOf.set(group.listing, seen);
  }
  const whole = [...listedOf].filter(([, seen]) => seen.listed === seen.members).map(([id]) => id);
  const wholeSet = new Set(whole);
  const moving = groups.filter((group) => group.listing === null || !wholeSet.has(group.listing));
  const left = [...new Set(moving.map((group) => group.listing).filter((id): id is string => id !== null))];
  const movingFiles = [...new Set(moving.map((group) => fileKey(group)))];
  const fresh = new Map<string, string>();
  if (movingFiles.length > 0) {
    const made = await sql<{ id: string }[]>`
      with ids as materialized (
        select nextval(pg_get_serial_sequence('test_case_listings', 'id')) as id, n
        from generate_series(1, ${movingFiles.length}::int) as n),
      made as (insert into test_case_listings (id, project_id, commit_sha, seen_at) select id, ${projectId}, ${commit}, ${now} from ids)
      select id::text from ids order by n`;
    movingFiles.forEach((key, i) => fresh.set(key, (made[i] as { id: string }).id));
  }
  if (moving.length > 0 || groups.some((group) => group.changed > 0)) {
    const written = rows.map((row) => ({ ...row, listing: fresh.get(fileKey(row)) ?? null }));
    const kept = sql`coalesce(tc.listing_id = any(${whole}::bigint[]), false)`;
    await sql`
      insert into test_cases as tc (project_id, id, name, file_path, suites, runner_project, tags, line, "column",
                                    is_active, listing_id, first_seen_commit_sha, last_seen_commit_sha, created_at, updated_at)
      select ${projectId}, x.id, x.name, x.file_path, string_to_array(x.suites, ${LIST_SEPARATOR}), x.runner_project,
             string_to_array(x.tags, ${LIST_SEPARATOR}), x.line, x."column",
             true, x.listing, ${commit}, ${commit}, ${now}, ${now}
      from jsonb_to_recordset(${sql.json(written)}) as x(id text, name text, file_path text, suites text, runner_project text,
                                                       tags text, line int, "column" int, listing bigint)
      left join test_cases cur on cur.project_id = ${projectId} and cur.id = x.id
      where cur.id is null or not coalesce(cur.listing_id = any(${whole}::bigint[]), false) or ${differs(sql, 'cur', commit)}
      on conflict (project_id, id) do update set
        name = excluded.name,
        file_path = excluded.file_path,
        suites = excluded.suites,
        runner_project = excluded.runner_project,
        tags = case when tc.tags_set_by_hand then tc.tags else excluded.tags end,
        line = excluded.line,
        "column" = excluded."column",
        is_active = true,
        listing_id = case when ${kept} then tc.listing_id else excluded.listing_id end,
        first_seen_commit_sha = coalesce(tc.first_seen_commit_sha, excluded.first_seen_commit_sha),
        last_seen_commit_sha = case when ${kept} then tc.last_seen_commit_sha
          else coalesce(excluded.last_seen_commit_sha, (select l.commit_sha from test_case_listings l where l.id = tc.listing_id), tc.last_seen_commit_sha) end,
        updated_at = excluded.updated_at`;
  }
  if (whole.length > 0) {
    await sql`
      update test_case_listings set commit_sha = coalesce(${commit}, commit_sha), seen_at = ${now}
      where id = any(${whole}::bigint[])`;
  }
  // Listings their last tests left: nothing reads them any more.
  if (left.length > 0) {
    await sql`
      delete from test_case_listings l
      where l.id = any(${left}::bigint[]) and not exists (select from test_cases t where t.listing_id = l.id)`;
  }
}

/** A listed test's row differs from what the listing says of it (the columns the listing writes; its sighting aside). */
function differs(sql: Tx, table: 'tc' | 'cur', commit: string | null) {
  const t = sql(table);
  return sql`(
    (${t}.name, ${t}.file_path, ${t}.suites, ${t}.runner_project, ${t}.line, ${t}."column")
      is distinct from (x.name, x.file_path, string_to_array(x.suites, ${LIST_SEPARATOR}), x.runner_project, x.line, x."column")
    or (not ${t}.tags_set_by_hand and ${t}.tags is distinct from string_to_array(x.tags, ${LIST_SEPARATOR}))
    or not ${t}.is_active
    or (${t}.first_seen_commit_sha is null and ${commit}::text is not null))`;
}

function fileKey(test: { runner_project: string; file_path: string }): string {
  return `${test.runner_project}\u0000${test.file_path}`;
}

/** Between the items of a list sent as one text: a control character no title holds (it is taken out of any that does). */
const LIST_SEPARATOR = '\u001f';

function joinList(items: string[]): string {
  return items.map((item) => item.replaceAll(LIST_SEPARATOR, ' ')).join(LIST_SEPARATOR);
}

/**
 * After a complete run or a sync: tests of the covered runner projects that it no longer listed are
 * inactive. The unlisted ones are a set difference (EXCEPT: a hash or a sort): `not (id = any($1))`
 * is a linear search of the array per test once the statement's plan is generic, which PostgreSQL
 * picks after five runs of a prepared statement (70 s at 100,000 tests).
 */
export async function deactivateUnlisted(sql: Tx, projectId: number, runnerProjects: string[], listedIds: string[], now: Date): Promise<void> {
  if (runnerProjects.length === 0) return;
  await sql`
    update test_cases t set is_active = false, updated_at = ${now}
    from (select id from test_cases where project_id = ${projectId} and is_active and runner_project = any(${runnerProjects}::text[])
          except
          select unnest(${listedIds}::text[])) as unlisted
    where t.project_id = ${projectId} and t.id = unlisted.id`;
}

export async function listTestCases(sql: Tx, projectId: number, q: TestCaseListQuery): Promise<{ rows: TestCaseRow[]; total: number }> {
  const tags = parseTagList(q.tags);
  const search = q.search ? `%${escapeLike(q.search.toLowerCase())}%` : null;
  const where = sql`
    project_id = ${projectId}
    ${q.is_active === 'true' ? sql`and is_active` : sql``}
    ${q.file_path ? sql`and file_path like ${`${escapeLike(q.file_path)}%`}` : sql``}
    ${q.runner_project ? sql`and runner_project = ${q.runner_project}` : sql``}
    ${tags.length > 0 ? sql`and tags && ${tags}::text[]` : sql``}
    ${q.first_seen_commit_sha ? sql`and first_seen_commit_sha = ${q.first_seen_commit_sha}` : sql``}
    ${q.last_seen_commit_sha ? sql`and last_seen_commit_sha = ${q.last_seen_commit_sha}` : sql``}
    ${search ? sql`and (lower(name) like ${search} or lower(file_path) like ${search} or lower(array_to_string(suites, ' ')) like ${search})` : sql``}`;
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from ${testCasesAsRead(sql)} where ${where}`;
  // A search matches few tests of many: they are found first (one pass over the project's tests),
  // then ordered, where walking the list's index in order would visit every test to find them.
  const rows = search
    ? await sql<TestCaseRow[]>`
        with matches as materialized (select ${columns(sql)}, line from ${testCasesAsRead(sql)} where ${where})
        select ${columns(sql)} from matches order by file_path, line nulls last, name, runner_project
        limit ${q.per_page} offset ${(q.page - 1) * q.per_page}`
    : await sql<TestCaseRow[]>`
        select ${columns(sql)} from ${testCasesAsRead(sql)} where ${where}
        order by file_path, line nulls last, name, runner_project
        limit ${q.per_page} offset ${(q.page - 1) * q.per_page}`;
  return { rows, total: count?.total ?? 0 };
}

export async function replaceTags(sql: Tx, projectId: number, id: string, tags: string[], now: Date): Promise<TestCaseRow | null> {
  const [row] = await sql<TestCaseRow[]>`
    with t as (
      update test_cases set tags = ${tags}, tags_set_by_hand = true, updated_at = ${now}
      where project_id = ${projectId} and id = ${id}
      returning *)
    select t.id, t.name, t.file_path, t.suites, t.runner_project, t.tags, t.created_at, greatest(t.updated_at, l.seen_at) as updated_at,
           t.first_seen_commit_sha, coalesce(l.commit_sha, t.last_seen_commit_sha) as last_seen_commit_sha
    from t left join test_case_listings l on l.id = t.listing_id`;
  return row ?? null;
}

/** One of the project's tests; null when it has none of this id. */
export async function getTestCase(sql: Tx, projectId: number, id: string): Promise<TestCaseRow | null> {
  const [row] = await sql<TestCaseRow[]>`select ${columns(sql)} from ${testCasesAsRead(sql)} where project_id = ${projectId} and id = ${id}`;
  return row ?? null;
}

/**
 * The titles of a project's tests by id, for pages that name tests: `file › title`, and the runner
 * project after it when the tests named span more than one (a test run in two browsers reads as two).
 */
export async function testTitles(sql: Tx, projectId: number, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<{ id: string; name: string; file_path: string; runner_project: string }[]>`
    select id, name, file_path, runner_project from test_cases where project_id = ${projectId} and id = any(${ids}::text[])`;
  const several = new Set(rows.map((row) => row.runner_project)).size > 1;
  return new Map(rows.map((row) => [row.id, `${row.file_path} › ${row.name}${several && row.runner_project ? ` (${row.runner_project})` : ''}`]));
}

/**
 * A project's tests that a person's words find: a tag when they start with `@`, else a part of the
 * title, file or suites (what a form that picks tests searches). Tests no longer listed are found
 * too: one environment's run may list fewer tests than another's.
 */
export async function findTests(sql: Tx, projectId: number, words: string, limit: number): Promise<{ rows: TestCaseRow[]; total: number }> {
  const text = words.trim();
  const byTag = text.startsWith('@');
  return listTestCases(sql, projectId, {
    project_id: projectId,
    is_active: 'false',
    ...(byTag ? { tags: text } : { search: text }),
    page: 1,
    per_page: limit,
  });
}
