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
  owners: string[];
  created_at: Date;
  updated_at: Date;
  first_seen_commit_sha: string | null;
  last_seen_commit_sha: string | null;
}

const columns = (sql: Tx) =>
  sql`id, name, file_path, suites, runner_project, tags, owners, created_at, updated_at, first_seen_commit_sha, last_seen_commit_sha`;

/**
 * Adds or refreshes the listed tests in the project's inventory, in one statement. `keepOwners`:
 * the listing cannot know owners (a JUnit or JSON report, a sync's listing), so a known test keeps
 * the ones the reporter last sent; the reporter's own listing replaces them (none sent: none now).
 */
export async function upsertTestCases(
  sql: Tx,
  projectId: number,
  tests: ListedTest[],
  commit: string | null,
  now: Date,
  options: { keepOwners?: boolean } = {},
): Promise<void> {
  if (tests.length === 0) return;
  // Each column as one array (unnest: PostgreSQL parses 8 arrays faster than an object a test),
  // lists of titles as one text each, split in the statement: a subquery per row and list to read
  // them from JSON arrays costs PostgreSQL a third of the statement at 100,000 tests.
  await sql`
    insert into test_cases as tc (project_id, id, name, file_path, suites, runner_project, tags, owners, line, "column",
                                  is_active, first_seen_commit_sha, last_seen_commit_sha, created_at, updated_at)
    select ${projectId}, x.id, x.name, x.file_path, string_to_array(x.suites, ${LIST_SEPARATOR}), x.runner_project,
           string_to_array(x.tags, ${LIST_SEPARATOR}), string_to_array(x.owners, ${LIST_SEPARATOR}), x.line, x."column",
           true, ${commit}, ${commit}, ${now}, ${now}
    from unnest(${tests.map((t) => t.id)}::text[], ${tests.map((t) => t.title)}::text[], ${tests.map((t) => t.file_path)}::text[],
                ${tests.map((t) => joinList(t.suites))}::text[], ${tests.map((t) => t.runner_project)}::text[],
                ${tests.map((t) => joinList(t.tags))}::text[], ${tests.map((t) => joinList(t.owners ?? []))}::text[],
                ${tests.map((t) => t.line)}::int[], ${tests.map((t) => t.column)}::int[])
         as x(id, name, file_path, suites, runner_project, tags, owners, line, "column")
    on conflict (project_id, id) do update set
      name = excluded.name,
      file_path = excluded.file_path,
      suites = excluded.suites,
      runner_project = excluded.runner_project,
      tags = case when tc.tags_set_by_hand then tc.tags else excluded.tags end,
      owners = ${options.keepOwners ? sql`tc.owners` : sql`excluded.owners`},
      line = excluded.line,
      "column" = excluded."column",
      is_active = true,
      first_seen_commit_sha = coalesce(tc.first_seen_commit_sha, excluded.first_seen_commit_sha),
      last_seen_commit_sha = coalesce(excluded.last_seen_commit_sha, tc.last_seen_commit_sha),
      updated_at = excluded.updated_at`;
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
    ${q.owner ? sql`and owners @> ${[q.owner]}::text[]` : sql``}
    ${q.first_seen_commit_sha ? sql`and first_seen_commit_sha = ${q.first_seen_commit_sha}` : sql``}
    ${q.last_seen_commit_sha ? sql`and last_seen_commit_sha = ${q.last_seen_commit_sha}` : sql``}
    ${search ? sql`and (lower(name) like ${search} or lower(file_path) like ${search} or lower(array_to_string(suites, ' ')) like ${search})` : sql``}`;
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from test_cases where ${where}`;
  // A search matches few tests of many: they are found first (one pass over the project's tests),
  // then ordered, where walking the list's index in order would visit every test to find them.
  const rows = search
    ? await sql<TestCaseRow[]>`
        with matches as materialized (select ${columns(sql)}, line from test_cases where ${where})
        select ${columns(sql)} from matches order by file_path, line nulls last, name, runner_project
        limit ${q.per_page} offset ${(q.page - 1) * q.per_page}`
    : await sql<TestCaseRow[]>`
        select ${columns(sql)} from test_cases where ${where}
        order by file_path, line nulls last, name, runner_project
        limit ${q.per_page} offset ${(q.page - 1) * q.per_page}`;
  return { rows, total: count?.total ?? 0 };
}

export async function replaceTags(sql: Tx, projectId: number, id: string, tags: string[], now: Date): Promise<TestCaseRow | null> {
  const [row] = await sql<TestCaseRow[]>`
    update test_cases set tags = ${tags}, tags_set_by_hand = true, updated_at = ${now}
    where project_id = ${projectId} and id = ${id}
    returning ${columns(sql)}`;
  return row ?? null;
}

/** One of the project's tests; null when it has none of this id. */
export async function getTestCase(sql: Tx, projectId: number, id: string): Promise<TestCaseRow | null> {
  const [row] = await sql<TestCaseRow[]>`select ${columns(sql)} from test_cases where project_id = ${projectId} and id = ${id}`;
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
export async function findTests(
  sql: Tx,
  projectId: number,
  words: string,
  limit: number,
  owner: string | null = null,
): Promise<{ rows: TestCaseRow[]; total: number }> {
  const text = words.trim();
  const byTag = text.startsWith('@');
  return listTestCases(sql, projectId, {
    project_id: projectId,
    is_active: 'false',
    ...(owner ? { owner } : {}),
    ...(text === '' ? {} : byTag ? { tags: text } : { search: text }),
    page: 1,
    per_page: limit,
  });
}
