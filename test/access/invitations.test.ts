import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoginLink, findSession } from '../../server/src/sessions/store.ts';
import { createUser, userForEmail } from '../../server/src/users/store.ts';
import { client } from '../helpers/http.ts';
import { spawnProctor } from '../helpers/process.ts';
import { seedProject, seedUser, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

// An invitation's link makes its person's account and signs it in only when the invited email has
// no account; it never signs anyone in as an account it did not make (issue 49). An account made
// after the invitation (the command line, another project's invitation, the identity provider)
// signs in the usual way and then follows the link; anyone signed in as another account is refused.

let server: TestServer;
let first: number;
let second: number;
let admin: { userId: string; key: string; email: string };
const clock = new TestClock('live');
let emails = 0;

beforeAll(async () => {
  server = await startTestServer({ clock });
  first = (await seedProject(server.sql, 'First')).projectId;
  second = (await seedProject(server.sql, 'Second')).projectId;
  admin = await seedUser(server.sql, [first, second], { role: 'admin' });
});
afterAll(async () => server?.close());

function freshEmail(): string {
  return `invitee${++emails}-${Date.now()}@example.com`;
}

/** An invitation's link on this server (its path and token), as the admin who asked for it keeps it. */
async function invite(base: TestServer, projectId: number, email: string, role = 'member', key = admin.key): Promise<string> {
  const answer = await client(base.url, key, { 'x-project-id': String(projectId) }).post('/api/members', { email, role });
  expect(answer.status).toBe(201);
  const url = new URL(answer.body.data.invitation.url as string);
  return `${base.url}${url.pathname}${url.search}`;
}

interface Followed {
  status: number;
  location: string | null;
  /** The session cookie's value the answer set; null when it set none. */
  session: string | null;
  text: string;
}

async function follow(link: string, session: string | null = null): Promise<Followed> {
  const response = await fetch(link, { redirect: 'manual', headers: session ? { cookie: `proctor_session=${encodeURIComponent(session)}` } : {} });
  const cookie = /^proctor_session=([^;]*)/.exec(response.headers.get('set-cookie') ?? '');
  return {
    status: response.status,
    location: response.headers.get('location'),
    session: cookie ? decodeURIComponent(cookie[1] as string) : null,
    text: await response.text(),
  };
}

/** A session of the account, made the usual way: its one-time sign-in link. */
async function signedIn(base: TestServer, userId: string): Promise<string> {
  const followed = await follow(`${base.url}/sign-in/link?token=${await createLoginLink(base.sql, userId, base.clock.now)}`);
  expect(followed.session).not.toBeNull();
  return followed.session as string;
}

async function sessionUser(base: TestServer, session: string): Promise<string | undefined> {
  return (await findSession(base.sql, session, base.clock.now))?.userId;
}

async function sessionsOf(base: TestServer, userId: string): Promise<number> {
  const [row] = await base.sql<{ n: number }[]>`select count(*)::int as n from sessions where user_id = ${userId}`;
  return row?.n ?? 0;
}

async function roleIn(base: TestServer, projectId: number, email: string): Promise<string | null> {
  const [row] = await base.sql<{ role: string }[]>`
    select m.role from memberships m join users u on u.id = m.user_id where lower(u.email) = ${email} and m.project_id = ${projectId}`;
  return row?.role ?? null;
}

async function pending(base: TestServer, projectId: number, email: string): Promise<boolean> {
  const listed = await client(base.url, admin.key, { 'x-project-id': String(projectId) }).get('/api/members');
  return (listed.body.data.invitations as { email: string }[]).some((invitation) => invitation.email === email);
}

async function usersOf(base: TestServer, email: string): Promise<string[]> {
  return (await base.sql<{ id: string }[]>`select id from users where lower(email) = ${email}`).map((row) => row.id);
}

describe('a kept invitation link, once its email has an account', () => {
  it('when the account is made later by `proctor user create --admin`, then the link gives no session as it and joins nothing, and stays pending', async () => {
    const email = freshEmail();
    const link = await invite(server, first, email, 'viewer');
    const made = spawnProctor(['user', 'create', '--email', email, '--name', 'Root', '--admin'], { DATABASE_URL: server.db.url, PORT: '', PUBLIC_URL: '' });
    expect(await made.exited).toBe(0);
    const rootId = made.output().trim();
    expect(await usersOf(server, email)).toEqual([rootId]);

    const followed = await follow(link);
    expect(followed.status).toBe(401);
    expect(followed.session).toBeNull();
    expect(followed.text).toContain(`This invitation is for ${email}, which has an account: sign in as it`);
    expect(await sessionsOf(server, rootId)).toBe(0);
    expect(await roleIn(server, first, email)).toBeNull();
    expect(await pending(server, first, email)).toBe(true);
    // Again, the same: nothing was used.
    expect((await follow(link)).status).toBe(401);
    expect(await sessionsOf(server, rootId)).toBe(0);

    // Its owner signs in by a sign-in link, follows the invitation again, and joins with its role: once.
    const session = await signedIn(server, rootId);
    const accepted = await follow(link, session);
    expect(accepted).toMatchObject({ status: 303, location: `/projects/${first}/runs`, session: null });
    expect(await roleIn(server, first, email)).toBe('viewer');
    expect(await pending(server, first, email)).toBe(false);
    expect((await follow(link, session)).status).toBe(410);
  });

  it('when the account is made later by the users store, as the identity provider makes it, then the link gives no session and joins nothing', async () => {
    const email = freshEmail();
    const link = await invite(server, first, email);
    const userId = await userForEmail(server.sql, { email: email.toUpperCase(), name: 'From the provider' });
    const followed = await follow(link);
    expect(followed.status).toBe(401);
    expect(followed.session).toBeNull();
    expect(await sessionsOf(server, userId)).toBe(0);
    expect(await roleIn(server, first, email)).toBeNull();
    expect(await pending(server, first, email)).toBe(true);
  });

  it("when two projects invite one email, then the first link makes the account and signs it in, and the second joins only that account's session", async () => {
    const email = freshEmail();
    const firstLink = await invite(server, first, email, 'member');
    const secondLink = await invite(server, second, email, 'admin');

    const made = await follow(firstLink);
    expect(made).toMatchObject({ status: 303, location: `/projects/${first}/runs` });
    const [userId] = await usersOf(server, email);
    expect(await sessionUser(server, made.session as string)).toBe(userId);
    expect(await roleIn(server, first, email)).toBe('member');

    // The second link alone, in another browser: no session, nothing joined.
    const alone = await follow(secondLink);
    expect(alone.status).toBe(401);
    expect(alone.session).toBeNull();
    expect(await sessionsOf(server, userId as string)).toBe(1);
    expect(await roleIn(server, second, email)).toBeNull();

    // With the account's own session, it joins.
    expect(await follow(secondLink, made.session)).toMatchObject({ status: 303, location: `/projects/${second}/runs`, session: null });
    expect(await roleIn(server, second, email)).toBe('admin');
    expect(await usersOf(server, email)).toEqual([userId]);
  });

  it('when someone signed in as another account follows the link, then it is refused and nothing joins, whether or not the email has an account', async () => {
    const other = await createUser(server.sql, { email: freshEmail(), name: 'Other', picture: '' });
    const otherSession = await signedIn(server, other);

    const noAccount = freshEmail();
    const noAccountLink = await invite(server, first, noAccount);
    const refused = await follow(noAccountLink, otherSession);
    expect(refused.status).toBe(403);
    expect(refused.session).toBeNull();
    expect(refused.text).toContain(`this invitation is for ${noAccount}, and you are signed in as`);
    expect(await usersOf(server, noAccount)).toEqual([]);
    expect(await roleIn(server, first, noAccount)).toBeNull();
    expect(await pending(server, first, noAccount)).toBe(true);

    const withAccount = freshEmail();
    const link = await invite(server, first, withAccount);
    const owner = await createUser(server.sql, { email: withAccount, name: 'Owner', picture: '' });
    expect((await follow(link, otherSession)).status).toBe(403);
    expect(await roleIn(server, first, withAccount)).toBeNull();
    const [otherRow] = await server.sql<{ n: number }[]>`select count(*)::int as n from memberships where user_id = ${other}`;
    expect(otherRow?.n).toBe(0);
    expect(await sessionsOf(server, owner)).toBe(0);
    // Still the owner's to use.
    expect((await follow(link, await signedIn(server, owner))).status).toBe(303);
    expect(await roleIn(server, first, withAccount)).toBe('member');
  });
});

describe('an invitation whose email has no account', () => {
  it('when its link is followed, then it makes the account, signs it in, and joins it with the role, once', async () => {
    const email = freshEmail();
    const link = await invite(server, second, email, 'viewer');
    const followed = await follow(link);
    expect(followed).toMatchObject({ status: 303, location: `/projects/${second}/runs` });
    const [userId] = await usersOf(server, email);
    expect(userId).toBeDefined();
    expect(await sessionUser(server, followed.session as string)).toBe(userId);
    expect(await roleIn(server, second, email)).toBe('viewer');
    const [row] = await server.sql<{ is_admin: boolean }[]>`select is_admin from users where id = ${userId as string}`;
    expect(row?.is_admin).toBe(false);
    const again = await follow(link);
    expect(again.status).toBe(410);
    expect(again.session).toBeNull();
  });

  it("when two projects' links of one email are followed at once, then one makes the account and signs it in, and the other gets no session and joins nothing", async () => {
    for (let round = 0; round < 5; round++) {
      const email = freshEmail();
      const links = [await invite(server, first, email), await invite(server, second, email)];
      const answers = await Promise.all(links.map((link) => follow(link)));
      const made = answers.filter((answer) => answer.status === 303);
      expect(made).toHaveLength(1);
      expect(answers.map((answer) => answer.status).sort()).toEqual([303, 401]);
      expect(answers.filter((answer) => answer.session !== null)).toHaveLength(1);
      const users = await usersOf(server, email);
      expect(users).toHaveLength(1);
      expect(await sessionUser(server, made[0]?.session as string)).toBe(users[0]);
      const [row] = await server.sql<{ n: number }[]>`select count(*)::int as n from memberships where user_id = ${users[0] as string}`;
      expect(row?.n).toBe(1);
      expect(await sessionsOf(server, users[0] as string)).toBe(1);
    }
  });

  it('when one link is followed eight times at once, then one signs in and joins, and the others are refused as used', async () => {
    const email = freshEmail();
    const link = await invite(server, first, email);
    const answers = await Promise.all(Array.from({ length: 8 }, () => follow(link)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([303, 410, 410, 410, 410, 410, 410, 410]);
    expect(answers.filter((answer) => answer.session !== null)).toHaveLength(1);
    expect(await usersOf(server, email)).toHaveLength(1);
  });
});

describe('with OpenID Connect', () => {
  let oidcServer: TestServer;
  let projectId: number;
  let projectAdmin: { userId: string; key: string; email: string };
  beforeAll(async () => {
    // The provider is never reached here: a signed-out person is only sent towards it.
    oidcServer = await startTestServer({
      clock: new TestClock('live'),
      env: { PROCTOR_OIDC_ISSUER: 'http://127.0.0.1:9', PROCTOR_OIDC_CLIENT_ID: 'proctor', PROCTOR_OIDC_CLIENT_SECRET: 'a-client-secret-of-proctor-for-tests' },
    });
    projectId = (await seedProject(oidcServer.sql, 'Provided')).projectId;
    projectAdmin = await seedUser(oidcServer.sql, [projectId], { role: 'admin' });
  });
  afterAll(async () => oidcServer?.close());

  it('when the link is followed signed out, then it is on to the provider, and no account is made or taken; signed in as the invited account, it joins', async () => {
    const email = freshEmail();
    const link = await invite(oidcServer, projectId, email, 'viewer', projectAdmin.key);
    const signedOut = await follow(link);
    expect(signedOut.status).toBe(303);
    expect(signedOut.location).toBe(`/sign-in/oidc?next=${encodeURIComponent(new URL(link).pathname + new URL(link).search)}`);
    expect(signedOut.session).toBeNull();
    expect(await usersOf(oidcServer, email)).toEqual([]);

    const userId = await userForEmail(oidcServer.sql, { email, name: 'Invited' });
    expect((await follow(link)).session).toBeNull();
    const other = await createUser(oidcServer.sql, { email: freshEmail(), name: 'Other', picture: '' });
    expect((await follow(link, await signedIn(oidcServer, other))).status).toBe(403);
    expect(await follow(link, await signedIn(oidcServer, userId))).toMatchObject({ status: 303, location: `/projects/${projectId}/runs`, session: null });
    expect(await roleIn(oidcServer, projectId, email)).toBe('viewer');
  });
});
