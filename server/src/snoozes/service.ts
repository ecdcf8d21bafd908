import { audited } from '../audit/index.ts';
import type { Sql, Tx } from '../db.ts';
import { getEnvironment, getEnvironmentBySlug } from '../environments/index.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';
import { actingUserId, type Scope } from '../principals.ts';
import type { SnoozeStatus } from './schema.ts';
import * as store from './store.ts';

/** How the caller names the fields a refusal is about: `body.snooze_until` for the API, `until` for MCP. */
export interface SnoozeFieldNames {
  until: string;
  environment: string;
  run: string;
}

export interface SnoozeRequest {
  testIds: string[];
  until: Date;
  description: string | null;
  environmentId: number | null;
  createdFromRunId: number | null;
}

/** A snooze made by whoever the scope is (a person, a key), in the future, of this project's environment and run; audited. */
export async function snoozeTests(sql: Sql, scope: Scope, request: SnoozeRequest, now: Date, fields: SnoozeFieldNames): Promise<store.SnoozeRow> {
  if (!(request.until > now)) throw new InvalidInputError(`${fields.until}: must be in the future`);
  if (request.environmentId !== null && !(await getEnvironment(sql, scope.projectId, request.environmentId))) {
    throw new NotFoundError(`${fields.environment}: environment ${request.environmentId} not found`);
  }
  if (request.createdFromRunId !== null && !(await store.runExists(sql, scope.projectId, request.createdFromRunId))) {
    throw new NotFoundError(`${fields.run}: test run ${request.createdFromRunId} not found`);
  }
  return audited(sql, scope, now, async (tx) => {
    const made = await store.createSnooze(
      tx,
      scope.projectId,
      {
        testIds: request.testIds,
        snoozeUntil: request.until,
        description: request.description,
        createdBy: actingUserId(scope),
        environmentId: request.environmentId,
        createdFromRunId: request.createdFromRunId,
        source: 'user',
      },
      now,
    );
    return [made, { action: 'snooze.created', target: `snooze:${made.id}`, after: made }];
  });
}

/** What a list of snoozes asks for: by status, in an environment named by id or by slug (as a reporter knows it). */
export interface SnoozeListRequest {
  status: SnoozeStatus;
  environmentId: number | undefined;
  environmentSlug: string | undefined;
  limit: number;
  offset: number;
}

/** A page of the project's snoozes; the environment is given by id or by slug, not both. */
export async function listSnoozesOf(sql: Tx, projectId: number, request: SnoozeListRequest, now: Date): Promise<{ rows: store.SnoozeRow[]; total: number }> {
  return store.listSnoozes(sql, projectId, {
    status: request.status,
    environmentId: await environmentOfList(sql, projectId, request),
    now,
    limit: request.limit,
    offset: request.offset,
  });
}

async function environmentOfList(sql: Tx, projectId: number, request: SnoozeListRequest): Promise<number | undefined> {
  if (request.environmentSlug === undefined) return request.environmentId;
  if (request.environmentId !== undefined) throw new InvalidInputError('query.environment: give environment or environment_id, not both');
  const environment = await getEnvironmentBySlug(sql, projectId, request.environmentSlug);
  if (!environment) throw new NotFoundError(`query.environment: environment ${JSON.stringify(request.environmentSlug)} not found`);
  return environment.id;
}

/** A change of a snooze: each field left undefined stays as it is; `expireNow` ends it at once. */
export interface SnoozeChange {
  expireNow: boolean;
  until: Date | undefined;
  description: string | null | undefined;
  environmentId: number | null | undefined;
  testIds: string[] | undefined;
}

/** A snooze changed: its end in the future (or now, to expire it), its environment one of the project's; audited. */
export async function changeSnooze(sql: Sql, scope: Scope, id: number, change: SnoozeChange, now: Date): Promise<store.SnoozeRow> {
  if (change.expireNow && change.until !== undefined) throw new InvalidInputError('body.expire_now: cannot be combined with snooze_until');
  if (change.environmentId != null && !(await getEnvironment(sql, scope.projectId, change.environmentId))) {
    throw new NotFoundError(`body.scoped_to_environment_id: environment ${change.environmentId} not found`);
  }
  if (change.until !== undefined && !(change.until > now)) throw new InvalidInputError('body.snooze_until: must be in the future');
  return audited(sql, scope, now, async (tx) => {
    const after = await store.updateSnooze(
      tx,
      scope.projectId,
      id,
      {
        snooze_until: change.expireNow ? now : change.until,
        description: change.description,
        scoped_to_environment_id: change.environmentId,
        test_ids: change.testIds,
      },
      now,
    );
    if (!after) throw new NotFoundError('snooze not found');
    return [after, { action: 'snooze.updated', target: `snooze:${after.id}`, after }];
  });
}

/** Tests added to a snooze (as a set); audited. */
export async function addTestsToSnooze(sql: Sql, scope: Scope, id: number, testIds: string[], now: Date): Promise<store.SnoozeRow> {
  return audited(sql, scope, now, async (tx) => {
    const after = await store.addSnoozeTestIds(tx, scope.projectId, id, testIds, now);
    if (!after) throw new NotFoundError('snooze not found');
    return [after, { action: 'snooze.updated', target: `snooze:${after.id}`, after }];
  });
}

/** A snooze deleted for good; the snooze as it was, audited. */
export async function deleteSnoozeOf(sql: Sql, scope: Scope, id: number, now: Date): Promise<store.SnoozeRow> {
  return audited(sql, scope, now, async (tx) => {
    const before = await store.deleteSnooze(tx, scope.projectId, id);
    if (!before) throw new NotFoundError('snooze not found');
    return [before, { action: 'snooze.deleted', target: `snooze:${before.id}`, before }];
  });
}
