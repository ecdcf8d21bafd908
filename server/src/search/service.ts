import type { Sql } from '../db.ts';
import type { FoundRun, SearchInput, SearchResult } from './schema.ts';
import { groupsContaining, runNumbered, runsMatching, testsContaining } from './store.ts';

/** `#12` or `12`: a run's number in its project. */
const RUN_NUMBER = /^#?(\d{1,9})$/;
/** A commit's abbreviation as git prints them (4 digits at least), or the whole hash. */
const COMMIT = /^[0-9a-f]{4,40}$/;

/**
 * One box for everything a person looks for in a project: the tests, runs and failure groups the
 * text names, each kind on its own (a number can be a run and part of a title).
 */
export async function searchProject(sql: Sql, projectId: number, input: SearchInput): Promise<SearchResult> {
  const text = input.q.toLowerCase();
  const number = RUN_NUMBER.exec(text)?.[1];
  const hex = COMMIT.test(text) ? text : null;
  const [tests, numbered, matching, failureGroups] = await Promise.all([
    testsContaining(sql, projectId, text, input.limit),
    number === undefined ? Promise.resolve([]) : runNumbered(sql, projectId, Number(number)),
    runsMatching(sql, projectId, text, hex, input.limit),
    groupsContaining(sql, projectId, text, input.limit),
  ]);
  const runs: FoundRun[] = numbered.map((run) => ({ ...run, matched: 'number' as const }));
  for (const { by_commit, ...run } of matching) {
    if (runs.length >= input.limit) break;
    if (!runs.some((found) => found.id === run.id)) runs.push({ ...run, matched: by_commit ? 'commit' : 'branch' });
  }
  return { tests, runs, failure_groups: failureGroups };
}
