import type { Scope } from '../auth/middleware.ts';
import { HttpError } from '../http/errors.ts';

/** A body `project_id` is legacy: when set, it must be the project the key resolved to. */
export function checkLegacyProjectId(scope: Scope, projectId: number | undefined): void {
  if (projectId !== undefined && projectId !== scope.projectId) {
    throw new HttpError(403, `body.project_id: ${projectId} is not the project of this request (${scope.projectId})`);
  }
}
