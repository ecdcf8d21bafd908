import { createHmac, timingSafeEqual } from 'node:crypto';

/** How long a signed URL authorises its action: an hour. */
export const URL_LIFETIME_MS = 60 * 60 * 1000;

/**
 * What a signature covers: one action on one thing (`download:12`, `artifact-upload:7`), so that a
 * signature for one never authorises another.
 */
export type SignedSubject = string;

function signature(secret: string, subject: SignedSubject, expires: number): string {
  return createHmac('sha256', secret).update(`${subject}:${expires}`).digest('base64url');
}

/** The query string that authorises `subject` until an hour from `now`. */
export function signedQueryString(secret: string, subject: SignedSubject, now: Date): string {
  const expires = Math.floor((now.getTime() + URL_LIFETIME_MS) / 1000);
  return `expires=${expires}&signature=${signature(secret, subject, expires)}`;
}

export type SignatureCheck = 'valid' | 'invalid' | 'expired';

export function checkSignature(secret: string, subject: SignedSubject, expires: number, given: string, now: Date): SignatureCheck {
  const expected = Buffer.from(signature(secret, subject, expires));
  const actual = Buffer.from(given);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return 'invalid';
  return expires * 1000 > now.getTime() ? 'valid' : 'expired';
}
