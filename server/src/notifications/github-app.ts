import { createSign } from 'node:crypto';

// The server's GitHub App proves itself with a JWT it signs (RS256, issued by the App's id), and
// acts on a repository with a token of the App's installation there, narrowed to that one
// repository (an installation may grant many, of other teams), which lasts an hour: tokens are
// kept until five minutes before they expire, so a busy server asks for one an hour per
// repository, not one per delivery.

const JWT_LIFETIME_S = 9 * 60; // GitHub refuses a JWT that expires more than 10 minutes ahead.
const CLOCK_DRIFT_S = 60; // issued a minute back, as GitHub advises, for a clock ahead of GitHub's.
const RENEW_BEFORE_MS = 5 * 60_000;

export interface GitHubApp {
  appId: number;
  privateKey: string;
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** The App's JWT, as https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app describes. */
export function appJwt(app: GitHubApp, now = Date.now()): string {
  const issuedAt = Math.floor(now / 1000) - CLOCK_DRIFT_S;
  const header = base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const payload = base64url(JSON.stringify({ iat: issuedAt, exp: issuedAt + JWT_LIFETIME_S, iss: String(app.appId) }));
  const signature = createSign('RSA-SHA256').update(`${header}.${payload}`).sign(app.privateKey);
  return `${header}.${payload}.${base64url(signature)}`;
}

interface InstallationToken {
  token: string;
  expiresAt: number;
}

const installationTokens = new Map<string, InstallationToken>();

/**
 * A token of the installation for `repository` alone (owner/name), kept while it has more than
 * five minutes left; `mint` asks GitHub for a new one.
 */
export async function installationToken(
  app: GitHubApp,
  installationId: number,
  repository: string,
  mint: () => Promise<{ token: string; expires_at: string }>,
  now = Date.now(),
): Promise<string> {
  const key = `${app.appId}/${installationId}/${repository.toLowerCase()}`;
  const kept = installationTokens.get(key);
  if (kept && kept.expiresAt - RENEW_BEFORE_MS > now) return kept.token;
  const minted = await mint();
  installationTokens.set(key, { token: minted.token, expiresAt: Date.parse(minted.expires_at) });
  return minted.token;
}
