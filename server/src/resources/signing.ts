import { createHmac, timingSafeEqual } from 'node:crypto';

export const URL_LIFETIME_MS = 60 * 60 * 1000;

export type SignedAction = 'upload' | 'download';

function signature(secret: string, action: SignedAction, resourceId: number, expires: number): string {
  return createHmac('sha256', secret).update(`${action}:${resourceId}:${expires}`).digest('base64url');
}

/** A URL that authorises one action on one resource until it expires (an hour from `now`). */
export function signedUrl(publicUrl: string, secret: string, action: SignedAction, resourceId: number, now: Date): string {
  const expires = Math.floor((now.getTime() + URL_LIFETIME_MS) / 1000);
  const path = action === 'upload' ? 'upload' : 'content';
  return `${publicUrl}/files/${resourceId}/${path}?expires=${expires}&signature=${signature(secret, action, resourceId, expires)}`;
}

export type SignatureCheck = 'valid' | 'invalid' | 'expired';

export function checkSignature(
  secret: string,
  action: SignedAction,
  resourceId: number,
  expires: number,
  given: string,
  now: Date,
): SignatureCheck {
  const expected = Buffer.from(signature(secret, action, resourceId, expires));
  const actual = Buffer.from(given);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return 'invalid';
  return expires * 1000 > now.getTime() ? 'valid' : 'expired';
}
