/**
 * Errors in the domain's terms, thrown by features and stores; `http/errors.ts` maps each kind to
 * its status in one place. Code that is not HTTP (the executor, the CLI) catches them by class.
 */
export abstract class DomainError extends Error {}

/** The input breaks a rule; the message names the field (`body.branch: …`). */
export class InvalidInputError extends DomainError {}

/** What the request names does not exist in its project. */
export class NotFoundError extends DomainError {}

/** The request is not allowed in this project, whoever's key it is. */
export class ForbiddenError extends DomainError {}

/** The request conflicts with the current state (a taken slug, a disabled environment, a refused repository). */
export class ConflictError extends DomainError {}

/**
 * A run that has ended takes no more reports. Its answer carries `code: 'run_ended'` and the run's
 * state beside the message, so that a runner stops on a field rather than on words.
 */
export class RunEndedError extends ConflictError {
  readonly code = RUN_ENDED;
  constructor(
    message: string,
    /** The run's end state (`cancelled`, …), when known. */
    readonly state: string | null = null,
  ) {
    super(message);
  }
}

/** The error `code` of a request refused because its run has ended (a 409, or a 401 for a run's own key). */
export const RUN_ENDED = 'run_ended';

/** The state the request presumes has changed (a cancel of a run that ended). */
export class PreconditionFailedError extends DomainError {}

/** What the request names existed and is gone for good (an expired link). */
export class GoneError extends DomainError {}
