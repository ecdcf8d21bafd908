import { ConflictError, NotFoundError } from '../errors.ts';
import { actingUserId, type Scope } from '../principals.ts';
import type { Sql, Tx } from '../db.ts';
import { decideAttach, foldMembers, type Member } from './members.ts';
import * as store from './store.ts';

function sourceOf(scope: Scope): 'machine' | 'human' {
  return scope.principal.kind === 'user' ? 'human' : 'machine';
}

/**
 * Records that a run's failing test belongs to a group: creates the group on first attach, appends
 * the event its log calls for (none when the run was already seen), refreshes the rollups.
 */
export async function attachMember(sql: Sql, scope: Scope, groupId: string, testRunId: number, testCaseId: string, now: Date): Promise<Member> {
  return sql.begin(async (tx) => {
    const environmentId = await store.environmentOfRun(tx, scope.projectId, testRunId);
    if (environmentId === null) throw new NotFoundError(`body.test_run_id: test run ${testRunId} not found`);
    const by = { source: sourceOf(scope), actorId: actingUserId(scope) };
    return attachInTx(tx, scope.projectId, groupId, { id: testRunId, environmentId }, testCaseId, by, now);
  });
}

interface AttachedBy {
  source: 'machine' | 'human';
  actorId: string | null;
}

async function attachInTx(
  tx: Tx,
  projectId: number,
  groupId: string,
  run: { id: number; environmentId: number },
  testCaseId: string,
  by: AttachedBy,
  now: Date,
): Promise<Member> {
  await store.lockGroup(tx, projectId, groupId, await store.firstFailure(tx, run.id, testCaseId), now);
  const events = await store.memberEvents(tx, projectId, groupId, testCaseId);
  const decision = decideAttach(events, by.source, run.id);
  if (decision !== 'nothing') {
    // An attach makes a new or detached member active; a sighting leaves the count as it is.
    const memberDelta = decision === 'attach' ? 1 : 0;
    const event = {
      test_case_id: testCaseId,
      kind: decision,
      source: by.source,
      actor_id: by.actorId,
      test_run_id: run.id,
      environment_id: run.environmentId,
      occurred_at: now,
    };
    await store.appendEvent(tx, projectId, groupId, event);
    events.push(event);
    await store.applySightings(tx, projectId, [{ groupId, memberDelta, sightings: 1 }], { at: now, testRunId: run.id }, now);
  }
  return foldMembers(events)[0] as Member;
}

/** Failures attached together: their logs read at once (bounded, as a log grows by a sighting a run). */
const ATTACHED_AT_ONCE = 500;

/**
 * Attaches the failed (and flaky) tests of one shard of a run to their failure groups, as the
 * reporter attaches each of its results: in the caller's transaction, a group made on its first
 * failure. For uploads that carry no reporter (JUnit XML), so that their failures group, are
 * titled and are labelled new or known as every other's. Groups are taken in id order (no two
 * uploads lock two groups in opposite orders).
 */
export async function attachShardFailures(tx: Tx, projectId: number, runId: number, shard: number, by: AttachedBy, now: Date): Promise<number> {
  const environmentId = await store.environmentOfRun(tx, projectId, runId);
  if (environmentId === null) return 0;
  const failed = await store.groupedFailuresOfShard(tx, runId, shard);
  if (failed.length === 0) return 0;
  // The groups to make are made together, each from its first failure (the shard's first test of
  // it, in the order below), under the project's titles lock taken before any group's row: a
  // thousand new groups are a few statements, not a few each. Then every group is locked, in id
  // order, and the failures are attached a chunk at a time, each chunk's logs read in one
  // statement and its events written in another, and each group's rollups moved once by all its
  // failures: what one attach at a time would write, in a few statements.
  await createMissingGroups(tx, projectId, runId, failed, now);
  await store.lockGroups(tx, projectId, [...new Set(failed.map((row) => row.failure_group_id))]);
  const changes = new Map<string, { groupId: string; memberDelta: number; sightings: number }>();
  for (let at = 0; at < failed.length; at += ATTACHED_AT_ONCE) {
    const chunk = failed.slice(at, at + ATTACHED_AT_ONCE);
    const logs = await store.membersEvents(
      tx,
      projectId,
      chunk.map((row) => ({ groupId: row.failure_group_id, testCaseId: row.test_case_id })),
    );
    const events: { group_id: string; test_case_id: string; kind: 'attach' | 'sighting' }[] = [];
    for (const row of chunk) {
      const decision = decideAttach(logs.get(`${row.failure_group_id}\u0000${row.test_case_id}`) ?? [], by.source, runId);
      if (decision === 'nothing') continue;
      events.push({ group_id: row.failure_group_id, test_case_id: row.test_case_id, kind: decision });
      const change = changes.get(row.failure_group_id) ?? { groupId: row.failure_group_id, memberDelta: 0, sightings: 0 };
      // An attach makes a new or detached member active; a sighting leaves the count as it is.
      if (decision === 'attach') change.memberDelta++;
      change.sightings++;
      changes.set(row.failure_group_id, change);
    }
    const common = { source: by.source, actor_id: by.actorId, test_run_id: runId, environment_id: environmentId, occurred_at: now };
    await store.appendEvents(tx, projectId, common, events);
  }
  // The groups' rollups as each attach moves them, summed: one update of each group, not one a failure.
  await store.applySightings(tx, projectId, [...changes.values()], { at: now, testRunId: runId }, now);
  return failed.length;
}

/**
 * The groups of these failures (in group order) that the project lacks, made from their first
 * failures. Looked for before the titles lock is taken, and again under it: an upload whose groups
 * are all known (the usual case from the second build on) never waits on another's titles.
 */
async function createMissingGroups(
  tx: Tx,
  projectId: number,
  runId: number,
  failed: { test_case_id: string; failure_group_id: string }[],
  now: Date,
): Promise<void> {
  const firstTest = new Map<string, string>();
  for (const row of failed) if (!firstTest.has(row.failure_group_id)) firstTest.set(row.failure_group_id, row.test_case_id);
  if ((await store.missingGroups(tx, projectId, [...firstTest.keys()])).length === 0) return;
  await store.lockGroupTitles(tx, projectId);
  const missing = await store.missingGroups(tx, projectId, [...firstTest.keys()]);
  const failures = await store.firstFailures(
    tx,
    runId,
    missing.map((id) => firstTest.get(id) as string),
  );
  const none = { message: null, location: null, testTitle: null, steps: null };
  await store.createGroups(
    tx,
    projectId,
    missing.map((id) => ({ id, failure: failures.get(firstTest.get(id) as string) ?? none })),
    now,
  );
}

export async function detachMember(sql: Sql, scope: Scope, groupId: string, testCaseId: string, now: Date): Promise<Member> {
  return sql.begin(async (tx) => {
    if (!(await store.lockExistingGroup(tx, scope.projectId, groupId))) throw new NotFoundError('failure group not found');
    const events = await store.memberEvents(tx, scope.projectId, groupId, testCaseId);
    const current = foldMembers(events)[0];
    if (!current) throw new NotFoundError('member not found in this failure group');
    if (current.state === 'detached') return current;
    const event = {
      test_case_id: testCaseId,
      kind: 'detach' as const,
      source: sourceOf(scope),
      actor_id: actingUserId(scope),
      test_run_id: null,
      environment_id: null,
      occurred_at: now,
    };
    await store.appendEvent(tx, scope.projectId, groupId, event);
    await store.applyDetach(tx, scope.projectId, groupId, now);
    return foldMembers([...events, event])[0] as Member;
  });
}

/** Renames a group and sets its status and diagnosis, together: a title another group holds is refused. */
export async function updateGroup(
  sql: Sql,
  projectId: number,
  groupId: string,
  patch: { title?: string; status?: string; diagnosis?: store.Diagnosis },
  now: Date,
): Promise<store.FailureGroupRow> {
  return sql.begin(async (tx) => {
    if (patch.title !== undefined) {
      const renamed = await store.renameGroup(tx, projectId, groupId, patch.title, now);
      if (renamed === 'taken') throw new ConflictError(`body.title: another failure group of the project is titled ${JSON.stringify(patch.title)}`);
    }
    const group = await store.updateGroup(tx, projectId, groupId, { status: patch.status, diagnosis: patch.diagnosis }, now);
    if (!group) throw new NotFoundError('failure group not found');
    return group;
  });
}
