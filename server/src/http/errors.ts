import { renderErrorPage } from './error-page.tsx';
import { PAGE_CONTENT_SECURITY_POLICY } from './headers.ts';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
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
  RUN_ENDED,
  RunEndedError,
} from '../errors.ts';

/** How an error answer is written: the contract's two JSON shapes (general, and the flat one of environments and analytics), or a page for a person's browser. */
export type ErrorShape = 'general' | 'flat' | 'page';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Typed fields the general error shape carries beside `message` (`code`, `run_state`). */
    readonly fields: ErrorFields | null = null,
  ) {
    super(message);
  }
}

/** What a client decides by, beside the message: `code` names the refusal, `run_state` the run's end. */
export interface ErrorFields {
  code: typeof RUN_ENDED;
  run_state: string | null;
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

export function sendError(res: Response, status: number, message: string, fields: ErrorFields | null = null): void {
  const given: ErrorShape = res.locals.errorShape ?? 'general';
  if (given === 'page') return sendErrorPage(res, status, message);
  // 401 and 403 use the general shape on every API route, whatever shape its other errors take.
  const shape = status === 401 || status === 403 ? 'general' : given;
  res.status(status).json(shape === 'flat' ? { error: message } : { data: null, error: { message, ...fields } });
}

const PAGE_TITLES: Record<number, string> = {
  400: 'This request is not right',
  403: 'Not allowed',
  404: 'Not found',
  410: 'Gone',
  503: 'Proctor is unavailable',
};

/** A page that says what went wrong, for the dashboard's pages; it loads nothing. */
function sendErrorPage(res: Response, status: number, message: string): void {
  const title = PAGE_TITLES[status] ?? (status >= 500 ? 'Something went wrong' : `Error ${status}`);
  if (status >= 500 && status !== 503) message = `${message}: Proctor logged it; try again, and tell the people who run Proctor if it happens again`;
  res.status(status);
  res.setHeader('content-type', 'text/html; charset=utf-8');
  res.setHeader('content-security-policy', PAGE_CONTENT_SECURITY_POLICY);
  res.send(renderErrorPage(title, message));
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

function statusAndMessage(error: unknown): [number, string, ErrorFields | null] {
  if (error instanceof HttpError) return [error.status, error.message, error.fields];
  if (error instanceof RunEndedError) return [domainStatus(error), error.message, { code: error.code, run_state: error.state }];
  if (error instanceof DomainError) {
    const status = domainStatus(error);
    return status === 500 ? [500, 'internal server error', null] : [status, error.message, null];
  }
  const statusError = error as StatusError;
  if (typeof statusError?.status === 'number' && statusError.status >= 400 && statusError.status < 500) {
    return [statusError.status, statusError.message, null];
  }
  if (isDatabaseUnavailable(error)) return [503, 'the database is unavailable; try again', null];
  return [500, 'internal server error', null];
}

/** The one error middleware, registered last. */
export const errorMiddleware: ErrorRequestHandler = (error, req, res, _next) => {
  const [status, message, fields] = statusAndMessage(error);
  // Outside the API, a person's browser is answered with a page whatever failed, and wherever.
  if (res.locals.errorShape === undefined && personAsksForPage(req)) res.locals.errorShape = 'page';
  if (status === 503) res.locals.log?.warn({ err: error }, 'request failed: database unavailable');
  else if (status >= 500) res.locals.log?.error({ err: error }, 'request failed');
  if (status === 503) res.setHeader('Retry-After', '2');
  if (res.headersSent) {
    res.end();
    return;
  }
  sendError(res, status, message, fields);
};

/**
 * A path nothing serves: a page when a person's browser asked for one (it prefers HTML to JSON), in
 * the contract's JSON for the API and for every client that asks for JSON or anything.
 */
export const unknownPath: RequestHandler = (req, _res, next) => {
  next(new HttpError(404, `no route for ${req.method} ${req.path}`));
};

/** A browser's request for a page: outside /api, preferring HTML to JSON. */
function personAsksForPage(req: Request): boolean {
  return !req.path.startsWith('/api/') && req.accepts(['json', 'html']) === 'html';
}
