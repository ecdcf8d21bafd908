import { SESSION_DAYS } from './store.ts';

/** The cookie that carries a dashboard session's secret. */
export const SESSION_COOKIE = 'proctor_session';

/**
 * A cookie's value from a request's Cookie header; null when absent or malformed. A cookie can be
 * planted from a sibling subdomain: one that does not decode is ignored, as if it were not there.
 */
export function readCookie(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key !== name) continue;
    try {
      return decodeURIComponent(value.join('='));
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * The Set-Cookie of a session: out of reach of scripts (HttpOnly), sent on top-level navigation
 * from elsewhere but not on cross-site posts (SameSite=Lax), and only over HTTPS when the service
 * is served on it.
 */
export function sessionCookie(value: string, secure: boolean): string {
  return [
    `${SESSION_COOKIE}=${encodeURIComponent(value)}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${SESSION_DAYS * 86_400}`,
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

export function clearedSessionCookie(secure: boolean): string {
  return [`${SESSION_COOKIE}=`, 'Path=/', 'HttpOnly', 'SameSite=Lax', 'Max-Age=0', ...(secure ? ['Secure'] : [])].join('; ');
}
