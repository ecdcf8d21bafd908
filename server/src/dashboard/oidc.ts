import { createHmac, timingSafeEqual } from 'node:crypto';
import type * as OpenIdClient from 'openid-client';
import type { OidcSettings } from '../config.ts';

/** The cookie that carries a sign-in under way at the provider: its state, PKCE verifier and nonce. */
export const OIDC_COOKIE = 'proctor_oidc';
const PENDING_MS = 10 * 60_000;

interface Pending {
  state: string;
  verifier: string;
  nonce: string;
  next: string;
  expires: number;
}

export class OidcSignInError extends Error {}

/** Loaded at the first sign-in: a server without a provider, and every HTTP worker until then, does without its memory. */
function openIdClient(): Promise<typeof OpenIdClient> {
  return import('openid-client');
}

/**
 * Sign-in with an OpenID Connect provider (authorization code with PKCE, through `openid-client`).
 * The provider's metadata is discovered once, at first use. What the browser carries between the
 * two legs is signed with the server's secret, so it cannot be forged or replayed after 10 minutes.
 */
export class OidcSignIn {
  private configuration: Promise<OpenIdClient.Configuration> | null = null;

  constructor(
    private readonly settings: OidcSettings,
    private readonly secret: string,
  ) {}

  /** The provider's name as the sign-in button shows it. */
  get providerName(): string {
    return new URL(this.settings.issuer).host;
  }

  private discovered(): Promise<OpenIdClient.Configuration> {
    const issuer = new URL(this.settings.issuer);
    // Plain http only for a provider on this machine's loopback (a test, a local provider).
    const local = issuer.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(issuer.hostname);
    this.configuration ??= openIdClient()
      .then((client) =>
        client.discovery(
          issuer,
          this.settings.clientId,
          this.settings.clientSecret,
          undefined,
          local ? { execute: [client.allowInsecureRequests] } : undefined,
        ),
      )
      .catch((error: unknown) => {
        this.configuration = null;
        throw new OidcSignInError(`the identity provider at ${this.settings.issuer} could not be reached: ${(error as Error).message}`);
      });
    return this.configuration;
  }

  /** Where to send the browser, and the cookie that remembers this sign-in until it comes back. */
  async start(redirectUri: string, next: string, now: Date): Promise<{ url: string; pending: string }> {
    const configuration = await this.discovered();
    const client = await openIdClient();
    const pending: Pending = {
      state: client.randomState(),
      verifier: client.randomPKCECodeVerifier(),
      nonce: client.randomNonce(),
      next,
      expires: now.getTime() + PENDING_MS,
    };
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: 'openid email profile',
      code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    return { url: url.href, pending: this.seal(pending) };
  }

  /** The person the provider vouches for, from the URL it sent the browser back to. */
  async finish(callbackUrl: URL, sealed: string | null, now: Date): Promise<{ email: string; name: string; next: string }> {
    const pending = sealed ? this.unseal(sealed) : null;
    if (!pending || pending.expires < now.getTime()) throw new OidcSignInError('this sign-in was not started here or took too long: start again');
    const configuration = await this.discovered();
    const client = await openIdClient();
    let claims: Record<string, unknown>;
    try {
      const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
      });
      const idToken = tokens.claims();
      if (!idToken) throw new Error('no ID token');
      // Providers that conform to the spec put email and name in the userinfo answer, not the ID token.
      const userInfo = configuration.serverMetadata().userinfo_endpoint ? await client.fetchUserInfo(configuration, tokens.access_token, idToken.sub) : {};
      claims = { ...idToken, ...userInfo };
    } catch (error) {
      throw new OidcSignInError(`the identity provider's answer was refused: ${(error as Error).message}`);
    }
    const email = typeof claims.email === 'string' ? claims.email : null;
    if (!email) throw new OidcSignInError('the identity provider gave no email address: Proctor knows people by it');
    // Proctor knows people by their email: an address the provider has not verified would take the
    // account of that email, or make one that its owner's invitation later joins. Some providers
    // send the claim as a string ("true"), in their userinfo answer.
    const verified = claims.email_verified === true || claims.email_verified === 'true';
    const unverified = claims.email_verified === false || claims.email_verified === 'false';
    if (unverified) throw new OidcSignInError('the identity provider has not verified this email address');
    if (!verified && !this.settings.trustEmailsWithoutClaim) {
      throw new OidcSignInError('the identity provider does not say that it verified this email address (email_verified): nobody is signed in with it');
    }
    const name = typeof claims.name === 'string' && claims.name ? claims.name : email;
    return { email, name, next: pending.next };
  }

  private seal(pending: Pending): string {
    const body = Buffer.from(JSON.stringify(pending)).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  private unseal(sealed: string): Pending | null {
    const [body, signature] = sealed.split('.');
    if (!body || !signature) return null;
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
    try {
      return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Pending;
    } catch {
      return null;
    }
  }

  private sign(body: string): string {
    return createHmac('sha256', this.secret).update(`oidc:${body}`).digest('base64url');
  }
}

export function pendingCookie(value: string, secure: boolean): string {
  return [`${OIDC_COOKIE}=${value}`, 'Path=/sign-in/oidc', 'HttpOnly', 'SameSite=Lax', `Max-Age=${PENDING_MS / 1000}`, ...(secure ? ['Secure'] : [])].join(
    '; ',
  );
}

export function clearedPendingCookie(secure: boolean): string {
  return [`${OIDC_COOKIE}=`, 'Path=/sign-in/oidc', 'HttpOnly', 'SameSite=Lax', 'Max-Age=0', ...(secure ? ['Secure'] : [])].join('; ');
}
