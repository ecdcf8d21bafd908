import type { RequestHandler } from 'express';

/**
 * Headers on every answer: nothing is sniffed into another type, no page of this origin is framed
 * by another (clickjacking), no link leaks the URL it was followed from (run-page tokens travel in
 * it), and an answer that sets no policy of its own loads nothing at all.
 */
export const securityHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
  res.setHeader('x-frame-options', 'DENY');
  res.setHeader('content-security-policy', "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
  next();
};

/** A page that styles itself inline, with images from `imageSources` (its icon is Proctor's own). */
export function pagePolicy(imageSources = "'self'"): string {
  return `default-src 'none'; style-src 'unsafe-inline'; img-src ${imageSources}; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`;
}

/** The policy of a page that styles itself inline and loads nothing but its icon. */
export const PAGE_CONTENT_SECURITY_POLICY = pagePolicy();
