import { z } from 'zod';
import { checkSignature, type SignedSubject } from '../signing.ts';
import { HttpError } from './errors.ts';

/** The query of a signed URL (`signing.ts` makes them). */
export const signedQuery = z.object({ expires: z.coerce.number().int().min(0), signature: z.string().min(1).max(200) }).strict();

/** 403 for a tampered or expired signature: a signed URL's signature is its only authority. */
export function requireSignature(secret: string, subject: SignedSubject, query: z.infer<typeof signedQuery>, now: Date): void {
  const check = checkSignature(secret, subject, query.expires, query.signature, now);
  if (check !== 'valid') throw new HttpError(403, check === 'expired' ? 'this signed URL has expired' : 'invalid URL signature');
}
