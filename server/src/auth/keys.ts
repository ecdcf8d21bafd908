import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export type KeyKind = 'project' | 'user';

const KEY_PATTERN = /^prc_([pu])_([0-9a-f]{12})_([0-9a-f]{48})$/;

export interface ParsedKey {
  kind: KeyKind;
  id: string;
  secret: string;
}

export interface NewKey {
  id: string;
  plain: string;
  secretHash: Buffer;
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/** A key is `prc_<p|u>_<public id>_<secret>`; only the secret's hash is stored. */
export function generateKey(kind: KeyKind): NewKey {
  const id = randomBytes(6).toString('hex');
  const secret = randomBytes(24).toString('hex');
  return { id, plain: `prc_${kind === 'project' ? 'p' : 'u'}_${id}_${secret}`, secretHash: hashSecret(secret) };
}

export function parseKey(token: string): ParsedKey | null {
  const match = KEY_PATTERN.exec(token);
  if (!match) return null;
  const [, kind, id, secret] = match as unknown as [string, string, string, string];
  return { kind: kind === 'p' ? 'project' : 'user', id, secret };
}

const DUMMY_HASH = hashSecret('no such key');

/** Constant-time comparison; with no stored hash it still does the same work. */
export function secretMatches(secret: string, storedHash: Buffer | null): boolean {
  const candidate = hashSecret(secret);
  const equal = timingSafeEqual(candidate, storedHash ?? DUMMY_HASH);
  return storedHash !== null && equal;
}
