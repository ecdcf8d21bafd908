import { audited } from '../audit/index.ts';
import type { Sql } from '../db.ts';
import { getEnvironment } from '../environments/index.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';
import { actingUserId, type Scope } from '../principals.ts';
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
