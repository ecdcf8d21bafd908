import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/src/config.ts';
import { createSession } from '../../server/src/sessions/store.ts';
import { client } from '../helpers/http.ts';
import { spawnProctor } from '../helpers/process.ts';
import { seedProject, seedUser, startTestServer, type TestServer } from '../helpers/server.ts';

// Without PROCTOR_SMTP_URL no mail is sent, and every page that would send one says so and shows
// the link, or the way to make one, as before.

let server: TestServer;
let projectId: number;
let admin: { userId: string; key: string; email: string };
let cookie: string;

beforeAll(async () => {
  server = await startTestServer();
  projectId = (await seedProject(server.sql, 'Quiet')).projectId;
  admin = await seedUser(server.sql, [projectId], { role: 'admin' });
  cookie = `proctor_session=${encodeURIComponent((await createSession(server.sql, admin.userId, server.clock.now)).cookie)}`;
});
afterAll(async () => server?.close());

const page = async (path: string) => (await fetch(`${server.url}${path}`, { headers: { cookie } })).text();

describe('a server without PROCTOR_SMTP_URL', () => {
  it('when the sign-in page is opened, then it says no mail is sent and shows how to make a link, with no form to mail one', async () => {
    const html = await (await fetch(`${server.url}/sign-in`)).text();
    expect(html).toContain('This server sends no mail (its operator has not set <code>PROCTOR_SMTP_URL</code>)');
    expect(html).toContain('proctor user login-link --email &lt;your email>');
    expect(html).not.toContain('/sign-in/email');
  });

  it('when the mail form is posted anyway, then the page says no mail is sent', async () => {
    const response = await fetch(`${server.url}/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: admin.email }).toString(),
    });
    expect(response.status).toBe(404);
    expect(await response.text()).toContain('This server sends no mail');
  });

  it('when an admin invites a person without an account, then the answer holds the link, says it is not mailed, and the members page says no mail is sent', async () => {
    const answer = await client(server.url, admin.key, { 'x-project-id': String(projectId) }).post('/api/members', { email: 'quiet@example.com' });
    expect(answer.status).toBe(201);
    expect(answer.body.data.invitation).toMatchObject({ email: 'quiet@example.com', mailed: false });
    expect(answer.body.data.invitation.url).toMatch(/\/invitations\/accept\?token=/);
    const html = await page(`/projects/${projectId}/members`);
    expect(html).toContain('This server sends no mail (its operator has not set <code>PROCTOR_SMTP_URL</code>)');
    expect(html).toContain('shown here once, for you to pass on');
  });

  it('when an email destination is added, then it is refused, and the settings page offers none and says why', async () => {
    const api = client(server.url, admin.key, { 'x-project-id': String(projectId) });
    const refused = await api.post('/api/notification-destinations', { type: 'email', recipients: ['team@example.com'] });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('body.type: this server sends no mail');
    const html = await page(`/projects/${projectId}/settings`);
    expect(html).toContain('This server sends no mail (its operator has not set PROCTOR_SMTP_URL): there are no email destinations.');
    expect(html).not.toContain('<option value="email">');
  });

  it('when `proctor member add --email` and `proctor user login-link` make links, then they print them to pass on, as before', async () => {
    const proctor = async (...args: string[]) => {
      const run = spawnProctor(args, { DATABASE_URL: server.db.url, PORT: '', PUBLIC_URL: '', PROCTOR_SMTP_URL: '' });
      expect(await run.exited, run.output()).toBe(0);
      return run.output().trim();
    };
    expect(await proctor('member', 'add', '--project', String(projectId), '--email', 'quiet-cli@example.com')).toMatch(
      /^invited: http\S*\/invitations\/accept\?token=[\w-]+$/,
    );
    expect(await proctor('user', 'login-link', '--email', admin.email)).toMatch(/^http\S*\/sign-in\/link\?token=[\w-]+$/);
  });

  it('when the mail settings are wrong, then the server does not start, naming the variable', () => {
    expect(() => loadConfig({ PROCTOR_SMTP_URL: 'http://mail.example.com' })).toThrow(/PROCTOR_SMTP_URL: must be an smtp:\/\/ or smtps:\/\/ URL/);
    expect(() => loadConfig({ PROCTOR_MAIL_FROM: 'ci@example.com' })).toThrow(ConfigError);
    expect(() => loadConfig({ PROCTOR_SMTP_URL: 'smtp://mail.example.com', PROCTOR_MAIL_FROM: 'nobody' })).toThrow(/PROCTOR_MAIL_FROM/);
    expect(loadConfig({ PROCTOR_SMTP_URL: 'smtps://u:p@mail.example.com:465', PUBLIC_URL: 'https://proctor.example.com' }).mail).toEqual({
      smtpUrl: 'smtps://u:p@mail.example.com:465',
      from: 'Proctor <proctor@proctor.example.com>',
    });
  });
});
