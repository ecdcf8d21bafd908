import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSession } from '../../server/src/sessions/store.ts';
import { createUser } from '../../server/src/users/store.ts';
import { client } from '../helpers/http.ts';
import { spawnProctor } from '../helpers/process.ts';
import { linksIn, type MailServer, startMailServer } from '../helpers/mail.ts';
import { reportRun, settledDelivery } from '../helpers/notifications.ts';
import { runNumber } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

// With PROCTOR_SMTP_URL, Proctor mails invitations, sign-in links and run endings through a real
// SMTP server (MailDev, which asks for a user and password here): each mail has a text and an
// HTML part, the HTML escapes what people typed, the links work, and the log holds neither the
// SMTP password nor a link's token.

let server: TestServer;
let mail: MailServer;
let projectId: number;
let admin: { userId: string; key: string; email: string };
const clock = new TestClock('live');
// What people typed, as HTML would take it for markup.
const PROJECT = 'Shop <b>&"checkout"</b>';
const ESCAPED_PROJECT = 'Shop &lt;b&gt;&amp;&quot;checkout&quot;&lt;/b&gt;';

beforeAll(async () => {
  mail = await startMailServer();
  server = await startTestServer({ clock, env: { PROCTOR_SMTP_URL: mail.smtpUrl, PROCTOR_MAIL_FROM: 'Proctor CI <ci@proctor.example>' } });
  projectId = (await seedProject(server.sql, PROJECT)).projectId;
  admin = await seedUser(server.sql, [projectId], { role: 'admin' });
  await server.sql`update users set name = ${'Ada <i>Admin</i>'} where id = ${admin.userId}`;
});
afterAll(async () => {
  await server?.close();
  await mail?.close();
});

/** The path and query of a mailed link, on the test server (its public URL names port 0). */
function onServer(link: string): string {
  const url = new URL(link);
  return `${server.url}${url.pathname}${url.search}`;
}

async function follow(link: string) {
  const response = await fetch(onServer(link), { redirect: 'manual' });
  const cookie = /^proctor_session=([^;]*)/.exec(response.headers.get('set-cookie') ?? '');
  return { status: response.status, location: response.headers.get('location'), session: cookie ? decodeURIComponent(cookie[1] as string) : null };
}

async function askForLink(email: string, next = '/') {
  const response = await fetch(`${server.url}/sign-in/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email, next }).toString(),
  });
  return { status: response.status, text: await response.text() };
}

describe('an invitation, with mail', () => {
  it('when an admin adds a person without an account, then the invitation is mailed with its link in both parts, and following it makes the account and joins it', async () => {
    const email = `invitee-${Date.now()}@example.com`;
    const answer = await client(server.url, admin.key, { 'x-project-id': String(projectId) }).post('/api/members', { email, role: 'viewer' });
    expect(answer.status).toBe(201);
    expect(answer.body.data.invitation).toMatchObject({ email, role: 'viewer', mailed: true });
    const url = answer.body.data.invitation.url as string;

    const invitation = await mail.mailTo(email);
    expect(invitation.from).toEqual(['ci@proctor.example']);
    expect(invitation.subject).toBe(`Ada <i>Admin</i> invites you to ${PROJECT} on Proctor`);
    expect(invitation.text).toContain(`Ada <i>Admin</i> invites you to join the project ${PROJECT} on Proctor as a viewer.`);
    expect(linksIn(invitation.text)).toEqual([url]);
    expect(invitation.html).toContain(`href="${url}"`);
    expect(invitation.html).toContain(`You are invited to ${ESCAPED_PROJECT}`);
    expect(invitation.html).toContain('Ada &lt;i&gt;Admin&lt;/i&gt; invites you');
    expect(invitation.html).not.toContain('<b>&');
    expect(invitation.html).not.toContain('<i>Admin');

    const followed = await follow(linksIn(invitation.text)[0] as string);
    expect(followed).toMatchObject({ status: 303, location: `/projects/${projectId}/runs` });
    const [user] = await server.sql<{ id: string }[]>`select id from users where email = ${email}`;
    expect((await findSession(server.sql, followed.session as string, clock.now))?.userId).toBe(user?.id);
    const [membership] = await server.sql<{ role: string }[]>`select role from memberships where user_id = ${user?.id as string} and project_id = ${projectId}`;
    expect(membership?.role).toBe('viewer');
    expect((await follow(url)).status).toBe(410);
  });

  it('when an admin opens the members page, then it says invitations are mailed', async () => {
    const { createSession } = await import('../../server/src/sessions/store.ts');
    const { cookie } = await createSession(server.sql, admin.userId, clock.now);
    const page = await fetch(`${server.url}/projects/${projectId}/members`, { headers: { cookie: `proctor_session=${encodeURIComponent(cookie)}` } });
    const html = await page.text();
    expect(html).toContain('Anyone else is mailed an invitation link');
    expect(html).not.toContain('This server sends no mail');
  });
});

/** `proctor <args>` on the test server's data, with the mail settings the server has; its output. */
async function proctor(...args: string[]): Promise<string> {
  const run = spawnProctor(args, {
    DATABASE_URL: server.db.url,
    PORT: '',
    PUBLIC_URL: '',
    PROCTOR_SMTP_URL: mail.smtpUrl,
    PROCTOR_MAIL_FROM: 'Proctor CI <ci@proctor.example>',
  });
  expect(await run.exited, run.output()).toBe(0);
  return run.output().trim();
}

// Before the sign-in page's limits, which move the clock past a command's link.
describe('the command line, with mail', () => {
  it('when `proctor member add --email` invites a person, then the invitation is mailed, the command says so, and its link makes the account and joins it', async () => {
    const email = `cli-invitee-${Date.now()}@example.com`;
    const said = await proctor('member', 'add', '--project', String(projectId), '--email', email, '--role', 'member');
    expect(said).toBe(`invited: mailed the invitation to ${email} (through ${new URL(mail.smtpUrl).protocol}//${new URL(mail.smtpUrl).host})`);
    expect(said).not.toContain(mail.password);

    const invitation = await mail.mailTo(email);
    expect(invitation.subject).toBe(`An administrator invites you to ${PROJECT} on Proctor`);
    expect(invitation.text).toContain(`invites you to join the project ${PROJECT} on Proctor as a member.`);
    const [link] = linksIn(invitation.text);
    expect(link).toMatch(/\/invitations\/accept\?token=/);
    expect(invitation.html).toContain(`href="${link}"`);
    const followed = await follow(link as string);
    expect(followed).toMatchObject({ status: 303, location: `/projects/${projectId}/runs` });
    const [user] = await server.sql<{ id: string }[]>`select id from users where email = ${email}`;
    expect((await findSession(server.sql, followed.session as string, clock.now))?.userId).toBe(user?.id);
  });

  it('when `proctor user login-link` makes a link, then it is mailed to the person, not printed, and it signs them in once', async () => {
    const email = `cli-person-${Date.now()}@example.com`;
    const userId = await createUser(server.sql, { email, name: 'CLI Person', picture: '' });
    const said = await proctor('user', 'login-link', '--email', email);
    expect(said).toMatch(
      new RegExp(`^mailed a sign-in link \\(one use, within 15 minutes\\) to ${email.replace(/\./g, '\\.')} \\(through smtp://127\\.0\\.0\\.1:\\d+\\)$`),
    );
    expect(said).not.toContain('token=');

    const signIn = await mail.mailTo(email);
    expect(signIn.subject).toBe('Your Proctor sign-in link');
    const [link] = linksIn(signIn.text);
    expect(link).toMatch(/\/sign-in\/link\?token=[\w-]+$/);
    const followed = await follow(link as string);
    expect(followed.status).toBe(303);
    expect((await findSession(server.sql, followed.session as string, clock.now))?.userId).toBe(userId);
    expect((await follow(link as string)).status).toBe(400);
  });

  it('when the SMTP server does not take the mail, then the command says why, without the password, and prints the link to pass on', async () => {
    const email = `cli-unmailed-${Date.now()}@example.com`;
    await createUser(server.sql, { email, name: 'Unmailed', picture: '' });
    const wrong = mail.smtpUrl.replace(encodeURIComponent(mail.password), 'not-the-password');
    const run = spawnProctor(['user', 'login-link', '--email', email], { DATABASE_URL: server.db.url, PORT: '', PUBLIC_URL: '', PROCTOR_SMTP_URL: wrong });
    expect(await run.exited, run.output()).toBe(0);
    const said = run.output().trim();
    expect(said).toContain(`a sign-in link (one use, within 15 minutes) not mailed to ${email}: smtp://127.0.0.1:`);
    expect(said).toMatch(/pass this link on yourself:\nhttp\S*\/sign-in\/link\?token=[\w-]+$/);
    expect(said).not.toContain('not-the-password');
  });
});

describe('a sign-in link asked for on the sign-in page', () => {
  it('when the sign-in page is opened, then it offers to mail a link', async () => {
    const html = await (await fetch(`${server.url}/sign-in`)).text();
    expect(html).toContain('<form method="post" action="/sign-in/email"');
    expect(html).toContain('Email me a sign-in link');
    expect(html).not.toContain('This server sends no mail');
  });

  it('when an email of an account and one of none are typed, then both answers say the same, and only the account is mailed a link that signs it in', async () => {
    const email = `person-${Date.now()}@example.com`;
    const userId = await createUser(server.sql, { email, name: 'Person', picture: '' });
    const stranger = `nobody-${Date.now()}@example.com`;
    const none = await askForLink(stranger, '/projects');
    const some = await askForLink(email.toUpperCase(), '/projects');
    expect(none.status).toBe(200);
    expect(some.status).toBe(200);
    expect(some.text).toContain(`If ${email} is the email of an account here, a sign-in link is on its way to it.`);
    expect(none.text.replaceAll(stranger, 'EMAIL')).toBe(some.text.replaceAll(email, 'EMAIL'));

    const signIn = await mail.mailTo(email);
    expect(signIn.subject).toBe('Your Proctor sign-in link');
    const [link] = linksIn(signIn.text);
    expect(link).toMatch(/\/sign-in\/link\?token=[\w-]+&next=%2Fprojects$/);
    expect(signIn.html).toContain(`href="${(link as string).replace('&', '&amp;')}"`);
    expect(signIn.html).toContain('Sign in to Proctor');

    const followed = await follow(link as string);
    expect(followed).toMatchObject({ status: 303, location: '/projects' });
    expect((await findSession(server.sql, followed.session as string, clock.now))?.userId).toBe(userId);
    expect((await follow(link as string)).status).toBe(400);
    expect((await mail.received()).some((m) => m.to.includes(stranger))).toBe(false);
  });

  it('when one email asks for links again and again, then past three in 15 minutes it is refused, whether or not it has an account, until the window passes', async () => {
    for (const email of [`limited-${Date.now()}@example.com`, admin.email]) {
      for (let i = 0; i < 3; i++) expect((await askForLink(email)).status).toBe(200);
      const refused = await askForLink(email);
      expect(refused.status).toBe(429);
      expect(refused.text).toContain('Too many sign-in links were asked for: try again in');
    }
    clock.advance(16 * 60_000);
    expect((await askForLink(admin.email)).status).toBe(200);
    await mail.mailTo(admin.email, (m) => m.subject === 'Your Proctor sign-in link');
  });

  it('when what is typed is not an email, then the page says so and nothing is sent', async () => {
    const answer = await askForLink('not an email');
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('That is not an email address');
  });
});

describe('an email destination', () => {
  const recipients = [`team-${Date.now()}@example.com`, `lead-${Date.now()}@example.com`];

  it('when a run ends, then its recipients get a mail of it, with the failures, in text and HTML', async () => {
    await seedEnvironment(server.sql, projectId, 'staging');
    const api = client(server.url, admin.key, { 'x-project-id': String(projectId) });
    const created = await api.post('/api/notification-destinations', { type: 'email', recipients });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data.destination).toMatchObject({ type: 'email', recipients, url: null, repo: null, project: null, has_secret: false });

    const runId = await reportRun(api, 'feature/<x>', 'c'.repeat(40), [2]);
    expect(await settledDelivery(api, runId)).toMatchObject({ state: 'delivered', attempts: 1, last_error: null });
    const told = await mail.mailTo(recipients[0] as string);
    expect(told.to.sort()).toEqual([...recipients].sort());
    expect(told.subject).toBe(`${PROJECT}: run #${await runNumber(server.sql, runId)} failed in staging (feature/<x>)`);
    expect(told.text).toContain('2 passed · 1 failed');
    expect(told.text).toContain('- new: test 2');
    const [runLink] = linksIn(told.text);
    expect(runLink).toMatch(new RegExp(`/runs/${runId}\\?token=`));
    expect((await fetch(onServer(runLink as string))).status).toBe(200);
    expect(told.html).toContain(`${ESCAPED_PROJECT}: run #${await runNumber(server.sql, runId)} failed`);
    expect(told.html).toContain('branch feature/&lt;x&gt;');
    expect(told.html).toContain('test 2');
    expect(told.html).not.toContain('<b>&');
  });

  it('when the same failure comes back in the next run, then the mail labels it known and a new one beside it new, as Slack does, in text and HTML', async () => {
    const api = client(server.url, admin.key, { 'x-project-id': String(projectId) });
    const runId = await reportRun(api, 'main', 'd'.repeat(40), [2, 4]);
    expect(await settledDelivery(api, runId)).toMatchObject({ state: 'delivered', attempts: 1 });
    const number = await runNumber(server.sql, runId);
    const told = await mail.mailTo(recipients[1] as string, (m) => m.subject.includes(`run #${number} `));
    expect(told.text).toMatch(/- new: test 4[^\n]*\n- known: test 2/);
    expect(told.html.indexOf('<strong>new</strong>')).toBeGreaterThan(0);
    expect(told.html.indexOf('<strong>new</strong>')).toBeLessThan(told.html.indexOf('<strong>known</strong>'));
    const [runLink] = linksIn(told.text);
    expect(runLink).toMatch(new RegExp(`/runs/${runId}\\?token=`));
    expect(told.html).toContain('>Open the run</a>');
  });

  it('when an email destination lacks recipients, or another type has some, then it is refused naming the field', async () => {
    const api = client(server.url, admin.key, { 'x-project-id': String(projectId) });
    const without = await api.post('/api/notification-destinations', { type: 'email' });
    expect(without.status).toBe(400);
    expect(without.text).toContain('body.recipients: required for an email destination');
    const slack = await api.post('/api/notification-destinations', {
      type: 'slack',
      url: 'https://hooks.slack.com/services/T1/B2/x',
      recipients: ['a@example.com'],
    });
    expect(slack.status).toBe(400);
    expect(slack.text).toContain('body.recipients: only an email destination has recipients');
    const bad = await api.post('/api/notification-destinations', { type: 'email', recipients: ['not an address'] });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('body.recipients.0');
  });
});

describe("the server's log", () => {
  it('when mail was sent, then the log says so, naming the SMTP server without its password, and holds no link token', async () => {
    const log = server.logs.join('');
    expect(log).toContain('"msg":"mail sent"');
    expect(log).toContain('"mail":"invitation"');
    expect(log).toContain('"mail":"sign-in link"');
    expect(log).not.toContain(mail.password);
    expect(log).not.toContain(encodeURIComponent(mail.password));
    const tokens = (await mail.received()).flatMap((m) => linksIn(m.text)).map((link) => new URL(link).searchParams.get('token') as string);
    expect(tokens.length).toBeGreaterThan(3);
    for (const token of tokens) expect(log).not.toContain(token);
  });
});

describe('an SMTP server that refuses the login', () => {
  it('when a run ends, then its email delivery fails with the refusal, not retried, and neither the answer nor the log holds the password', async () => {
    const wrong = 'wrong-Pa55-Zq81x';
    const refusing = await startTestServer({ env: { PROCTOR_SMTP_URL: mail.smtpUrl.replace(encodeURIComponent(mail.password), wrong) } });
    try {
      const { projectId: id } = await seedProject(refusing.sql, 'Refused');
      await seedEnvironment(refusing.sql, id, 'staging');
      const { key } = await seedUser(refusing.sql, [id], { role: 'admin' });
      const api = client(refusing.url, key, { 'x-project-id': String(id) });
      expect((await api.post('/api/notification-destinations', { type: 'email', recipients: ['refused@example.com'] })).status).toBe(201);
      const runId = await reportRun(api, 'main', 'd'.repeat(40), [2]);
      const delivery = await settledDelivery(api, runId);
      expect(delivery).toMatchObject({ state: 'failed', attempts: 1 });
      expect(delivery.last_error).toMatch(/^the SMTP server smtp:\/\/127\.0\.0\.1:\d+ did not take the mail: EAUTH: /);
      expect(delivery.last_error).not.toContain(wrong);
      expect(refusing.logs.join('')).not.toContain(wrong);
      expect((await mail.received()).some((m) => m.to.includes('refused@example.com'))).toBe(false);
    } finally {
      await refusing.close();
    }
  });
});
