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

/** A run that has ended takes no more reports. */
export class RunEndedError extends ConflictError {}

/** The state the request presumes has changed (a cancel of a run that ended). */
export class PreconditionFailedError extends DomainError {}

/** What the request names existed and is gone for good (an expired link). */
export class GoneError extends DomainError {}
