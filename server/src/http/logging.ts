import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { httpRequestSeconds, httpRequestsInFlight } from '../metrics.ts';

/**
 * A request id a client or a proxy in front (HAProxy's `unique-id-header`, nginx's `$request_id`)
 * sent is kept, so that one id follows a request through the proxy, the node that served it and the
 * jobs it queued; else one is made. Kept only if it is a short token: it goes into every log line.
 */
const REQUEST_ID = /^[\w.:-]{1,100}$/;

export function requestIdOf(incoming: string | undefined): string {
  return incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * The route pattern a request matched (`/api/runs/:id`, never the URL: its ids would make a series
 * each), `unmatched` when none did (an unknown path, or a key refused before routing).
 */
function routeOf(req: Request): string {
  const route = (req as { route?: { path?: unknown } }).route;
  if (!route) return 'unmatched';
  return req.baseUrl ? `${req.baseUrl}${String(route.path)}` : String(route.path);
}

/**
 * One log line per request, and a child logger carrying the request id for handlers. Neither
 * headers nor bodies are logged: keys travel in the Authorization header and upload signatures
 * in the query, so the query string is left out too. With `measure`, each request is also counted
 * in the metrics: one histogram observation, by method, route pattern and status.
 */
export function requestLogging(logger: Logger, measure = false): RequestHandler {
  return (req, res, next) => {
    const requestId = requestIdOf(req.get('x-request-id'));
    res.setHeader('x-request-id', requestId);
    res.locals.requestId = requestId;
    const log = logger.child({ request_id: requestId });
    res.locals.log = log;
    const started = process.hrtime.bigint();
    if (measure) httpRequestsInFlight.inc();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (measure) {
        httpRequestsInFlight.dec();
        httpRequestSeconds.observe({ method: req.method, route: routeOf(req), status: res.statusCode }, ms / 1000);
      }
      log.info({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, 'request');
    });
    // A client gone before the answer was sent: no `finish`, but no longer in flight either.
    if (measure)
      res.on('close', () => {
        if (!res.writableFinished) httpRequestsInFlight.dec();
      });
    next();
  };
}
