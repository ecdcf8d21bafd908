import type { Server } from 'node:http';
import Provider from 'oidc-provider';

export interface Account {
  email: string;
  name: string;
  /** Sent as given; true when not given; not sent at all when null (as some providers do). */
  email_verified?: boolean | null;
}

export interface LocalOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

/**
 * A real OpenID Connect provider (the certified `oidc-provider`) on loopback, with one client
 * for Proctor and the given accounts. Its development sign-in pages take any login: the account
 * is the login typed in, with no password check.
 */
export async function startOidcProvider(port: number, redirectUri: string, accounts: Record<string, Account>): Promise<LocalOidcProvider> {
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = 'proctor';
  const clientSecret = 'a-client-secret-of-proctor-for-tests';
  const provider = new Provider(issuer, {
    clients: [
      { client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'] },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    findAccount: (_ctx, id) => {
      const account = accounts[id];
      if (!account) return undefined;
      const { email_verified: verified, ...rest } = account;
      return { accountId: id, claims: () => ({ sub: id, ...rest, ...(verified === null ? {} : { email_verified: verified ?? true }) }) };
    },
    features: { devInteractions: { enabled: true } },
  });
  const server: Server = provider.listen(port);
  await new Promise<void>((resolve) => server.once('listening', resolve));
  return {
    issuer,
    clientId,
    clientSecret,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
