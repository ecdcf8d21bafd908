import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { isDatabaseUnavailable } from '../db.ts';
import {
  ConflictError,
  DomainError,
  ForbiddenError,
  GoneError,
  InvalidInputError,
  NotFoundError,
  PreconditionFailedError,
} from '../errors.ts';

/** Which error body a route family answers with (interface.md, Errors). */
export type ErrorShape = 'general' | 'flat';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const notFound = (what: string) => new NotFoundError(`${what} not found`);

export class ValidationError extends HttpError {
  constructor(message: string) {
    super(400, message);
  }
}

/** One message that names every failing field, e.g. `body.slug: Too small: ...`. */
export function describeZodError(where: string, error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const field = [where, ...issue.path.map(String)].join('.');
      return `${field}: ${issue.message}`;
    })
    .join('; ');
}

export function sendError(res: Response, status: number, message: string): void {
  // 401 and 403 use the general shape on every route (decisions.md, Finer points).
  const shape: ErrorShape = status === 401 || status === 403 ? 'general' : (res.locals.errorShape ?? 'general');
  res.status(status).json(shape === 'flat' ? { error: message } : { data: null, error: { message } });
}

/** Errors that carry an HTTP status of their own (Express's router raises a few). */
interface StatusError extends Error {
  status?: number;
}

/** The one map from the domain's errors to HTTP statuses. */
function domainStatus(error: DomainError): number {
  if (error instanceof InvalidInputError) return 400;
  if (error instanceof ForbiddenError) return 403;
  if (error instanceof NotFoundError) return 404;
  if (error instanceof ConflictError) return 409;
  if (error instanceof GoneError) return 410;
  if (error instanceof PreconditionFailedError) return 412;
  return 500;
}

function statusAndMessage(error: unknown): [number, string] {
  if (error instanceof HttpError) return [error.status, error.message];
  if (error instanceof DomainError) {
    const status = domainStatus(error);
    return status === 500 ? [500, 'internal server error'] : [status, error.message];
  }
  const statusError = error as StatusError;
  if (typeof statusError?.status === 'number' && statusError.status >= 400 && statusError.status < 500) {
    return [statusError.status, statusError.message];
  }
  if (isDatabaseUnavailable(error)) return [503, 'the database is unavailable; try again'];
  return [500, 'internal server error'];
}

/** The one error middleware, registered last. */
export const errorMiddleware: ErrorRequestHandler = (error, req, res, _next) => {
  const [status, message] = statusAndMessage(error);
  if (status === 503) res.locals.log?.warn({ err: error }, 'request failed: database unavailable');
  else if (status >= 500) res.locals.log?.error({ err: error }, 'request failed');
  if (status === 503) res.setHeader('Retry-After', '2');
  if (res.headersSent) {
    res.end();
    return;
  }
  sendError(res, status, message);
};

export const unknownPath: RequestHandler = (req, _res, next) => {
  next(new HttpError(404, `no route for ${req.method} ${req.path}`));
};
