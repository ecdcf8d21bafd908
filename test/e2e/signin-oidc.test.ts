import { type Browser, chromium } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from '../helpers/axe.ts';
import { startOidcProvider, type LocalOidcProvider } from '../helpers/oidc.ts';
import { CHROMIUM_LAUNCH_OPTIONS } from '../helpers/playwright.ts';
import { freePort } from '../helpers/process.ts';
import { client } from '../helpers/http.ts';
import { seedProject, startTestServer, type TestServer } from '../helpers/server.ts';
import { addMember } from '../../server/src/projects/store.ts';
import { createUser } from '../../server/src/users/store.ts';
import { loadConfig } from '../../server/src/config.ts';

// Sign-in through a real OpenID Connect provider (oidc-provider) on loopback, in Chromium.
let provider: LocalOidcProvider;
let server: TestServer;
let browser: Browser;
let projectId: number;
let projectKey: string;

beforeAll(async () => {
  const port = await freePort();
  server = await startTestServer({
    env: {
      PROCTOR_OIDC_ISSUER: `http://127.0.0.1:${port}`,
      PROCTOR_OIDC_CLIENT_ID: 'proctor',
      PROCTOR_OIDC_CLIENT_SECRET: 'a-client-secret-of-proctor-for-tests',
    },
  });
  provider = await startOidcProvider(port, `${server.url}/sign-in/oidc/callback`, {
    alice: { email: 'alice@example.com', name: 'Alice Example' },
    bob: { email: 'Bob@Example.com', name: 'Bob Example' },
    mallory: { email: 'mallory@example.com', name: 'Mallory', email_verified: false },
    carol: { email: 'carol@example.com', name: 'Carol Example' },
    // Providers that do not send email_verified, or say false, for accounts that exist here.
    dave: { email: 'dave@example.com', name: 'Dave', email_verified: null },
    frank: { email: 'frank@example.com', name: 'Frank', email_verified: false },
    erin: { email: 'erin@example.com', name: 'Erin', email_verified: null },
  });
  const project = await seedProject(server.sql, 'Checkout');
  projectId = project.projectId;
  projectKey = project.key;
  // Bob is known already, by another spelling of his address, and is a member.
  await addMember(server.sql, projectId, await createUser(server.sql, { email: 'bob@example.com', name: 'Bob', picture: '' }), 'admin');
  for (const name of ['dave', 'frank']) await createUser(server.sql, { email: `${name}@example.com`, name, picture: '' });
  browser = await chromium.launch(CHROMIUM_LAUNCH_OPTIONS);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await provider?.close();
});

/** Through the provider's own pages: its login form (any login), then its consent. */
async function signInAs(login: string, at: { server: TestServer; provider: LocalOidcProvider } = { server, provider }) {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${at.server.url}/sign-in?next=${encodeURIComponent(`/projects/${projectId}/runs`)}`);
  expect(await seriousViolations(page)).toEqual([]);
  await page.getByRole('link', { name: /^Sign in with 127\.0\.0\.1:\d+$/ }).click();
  await throughProvider(page, login, at);
  return page;
}

/** The provider's login form (any login) and its consent, then back to Proctor. */
async function throughProvider(
  page: Awaited<ReturnType<Browser['newPage']>>,
  login: string,
  at: { server: TestServer; provider: LocalOidcProvider } = { server, provider },
): Promise<void> {
  await page.waitForURL(new RegExp(`^${at.provider.issuer}/`));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any');
  await page.locator('button[type="submit"]').click();
  await page.locator('button[autofocus], button[type="submit"]').first().click();
  await page.waitForURL(new RegExp(`^${at.server.url}/`));
}

const sessionsOf = async (on: TestServer, email: string) =>
  (await on.sql<{ n: number }[]>`select count(*)::int as n from sessions s join users u on u.id = s.user_id where u.email = ${email}`)[0]?.n;

const isInstanceAdmin = async (email: string) =>
  (await server.sql<{ is_admin: boolean }[]>`select is_admin from users where lower(email) = ${email}`)[0]?.is_admin;

describe('signing in with OpenID Connect', () => {
  it('when a known person signs in, then they are matched by email and land where they were going', async () => {
    const page = await signInAs('bob');
    expect(new URL(page.url()).pathname).toBe(`/projects/${projectId}/runs`);
    await expect.poll(() => page.getByRole('heading', { name: 'Runs of Checkout' }).count()).toBe(1);
    const [row] = await server.sql<{ n: number }[]>`select count(*)::int as n from users where lower(email) = 'bob@example.com'`;
    expect(row?.n).toBe(1);
    // The first person in, on a server with no instance admin, becomes one.
    expect(await isInstanceAdmin('bob@example.com')).toBe(true);
  });

  it('when a new person signs in, then a user is made with their email and name, in no project', async () => {
    const page = await signInAs('alice');
    // Signed in, but the project's page (where the sign-in began) does not exist for someone who is not a member.
    expect(new URL(page.url()).pathname).toBe(`/projects/${projectId}/runs`);
    expect(await page.content()).toContain('not found');
    await page.goto(`${server.url}/`);
    await expect.poll(() => page.getByText('You are not a member of any project yet').count()).toBe(1);
    const [alice] = await server.sql<{ name: string }[]>`select name from users where email = 'alice@example.com'`;
    expect(alice?.name).toBe('Alice Example');
    expect(await isInstanceAdmin('alice@example.com')).toBe(false);
  });

  it('when an invitation is followed, then the invited email signs in through the provider and joins, and a person of another email is refused', async () => {
    const invited = await client(server.url, projectKey).post('/api/members', { email: 'carol@example.com', role: 'viewer' });
    expect(invited.status).toBe(201);
    const { url } = invited.body.data.invitation as { url: string };
    const link = `${server.url}${new URL(url).pathname}${new URL(url).search}`;
    // Alice, signed in as herself, is not Carol.
    const alice = await signInAs('alice');
    await alice.goto(link);
    expect(await alice.content()).toContain('this invitation is for carol@example.com');
    // Carol follows the link: the provider first, then she lands in the project as a viewer.
    const carol = await (await browser.newContext()).newPage();
    await carol.goto(link);
    await throughProvider(carol, 'carol');
    await carol.waitForURL(`${server.url}/projects/${projectId}/runs`);
    const [membership] = await server.sql<{ role: string }[]>`
      select m.role from memberships m join users u on u.id = m.user_id where u.email = 'carol@example.com' and m.project_id = ${projectId}`;
    expect(membership?.role).toBe('viewer');
  });

  it('when the provider has not verified the email, then nobody is signed in', async () => {
    const page = await signInAs('mallory');
    expect(await page.getByRole('alert').textContent()).toContain('has not verified this email address');
    const [row] = await server.sql<{ n: number }[]>`select count(*)::int as n from users where email = 'mallory@example.com'`;
    expect(row?.n).toBe(0);
  });

  it('when the provider does not send email_verified for the email of an existing account, then nobody is signed in as it', async () => {
    const page = await signInAs('dave');
    expect(await page.getByRole('alert').textContent()).toContain('does not say that it verified this email address (email_verified)');
    expect(await sessionsOf(server, 'dave@example.com')).toBe(0);
    await page.goto(`${server.url}/projects/${projectId}/runs`);
    expect(new URL(page.url()).pathname).toMatch(/^\/sign-in/);
  });

  it('when the provider says email_verified false for the email of an existing account, then nobody is signed in as it', async () => {
    const page = await signInAs('frank');
    expect(await page.getByRole('alert').textContent()).toContain('has not verified this email address');
    expect(await sessionsOf(server, 'frank@example.com')).toBe(0);
  });

  it('when the provider does not send email_verified for a new email, then no account is made', async () => {
    const page = await signInAs('erin');
    expect(await page.getByRole('alert').textContent()).toContain('does not say that it verified');
    const [row] = await server.sql<{ n: number }[]>`select count(*)::int as n from users where email = 'erin@example.com'`;
    expect(row?.n).toBe(0);
  });

  it('when the callback is reached without a sign-in started here, then it is refused', async () => {
    const response = await fetch(`${server.url}/sign-in/oidc/callback?code=x&state=y`);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('was not started here');
  });
});

describe('a provider the operator trusts to verify every email (PROCTOR_OIDC_TRUST_EMAILS)', () => {
  let trusting: { server: TestServer; provider: LocalOidcProvider };

  beforeAll(async () => {
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    const trustingServer = await startTestServer({
      env: {
        PROCTOR_OIDC_ISSUER: issuer,
        PROCTOR_OIDC_CLIENT_ID: 'proctor',
        PROCTOR_OIDC_CLIENT_SECRET: 'a-client-secret-of-proctor-for-tests',
        PROCTOR_OIDC_TRUST_EMAILS: `${issuer}/`,
      },
    });
    const trustedProvider = await startOidcProvider(port, `${trustingServer.url}/sign-in/oidc/callback`, {
      dave: { email: 'dave@example.com', name: 'Dave', email_verified: null },
      frank: { email: 'frank@example.com', name: 'Frank', email_verified: false },
    });
    trusting = { server: trustingServer, provider: trustedProvider };
    for (const name of ['dave', 'frank']) await createUser(trustingServer.sql, { email: `${name}@example.com`, name, picture: '' });
  }, 60_000);

  afterAll(async () => {
    await trusting?.server.close();
    await trusting?.provider.close();
  });

  it('when it does not send email_verified, then the existing account of the email is signed in', async () => {
    const page = await signInAs('dave', trusting);
    await page.goto(`${trusting.server.url}/`);
    await expect.poll(() => page.getByText('You are not a member of any project yet').count()).toBe(1);
    expect(await sessionsOf(trusting.server, 'dave@example.com')).toBe(1);
  });

  it('when it says email_verified false, then nobody is signed in all the same', async () => {
    const page = await signInAs('frank', trusting);
    expect(await page.getByRole('alert').textContent()).toContain('has not verified this email address');
    expect(await sessionsOf(trusting.server, 'frank@example.com')).toBe(0);
  });

  it('when the setting names another provider than PROCTOR_OIDC_ISSUER, or none is set, then the server does not start', () => {
    const oidc = { PROCTOR_OIDC_ISSUER: 'https://id.example.com', PROCTOR_OIDC_CLIENT_ID: 'proctor', PROCTOR_OIDC_CLIENT_SECRET: 'secret' };
    expect(() => loadConfig({ ...oidc, PROCTOR_OIDC_TRUST_EMAILS: 'https://other.example.com' })).toThrow(
      /PROCTOR_OIDC_TRUST_EMAILS names https:\/\/other\.example\.com, not the provider of PROCTOR_OIDC_ISSUER/,
    );
    expect(() => loadConfig({ PROCTOR_OIDC_TRUST_EMAILS: 'https://id.example.com' })).toThrow(/PROCTOR_OIDC_TRUST_EMAILS: no provider is set/);
    expect(loadConfig({ ...oidc, PROCTOR_OIDC_TRUST_EMAILS: 'https://id.example.com/' }).oidc?.trustEmailsWithoutClaim).toBe(true);
    expect(loadConfig(oidc).oidc?.trustEmailsWithoutClaim).toBe(false);
  });
});
