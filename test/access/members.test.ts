import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../server/src/auth/store.ts';
import { createUser } from '../../server/src/users/store.ts';
import { client } from '../helpers/http.ts';
import { spawnProctor } from '../helpers/process.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

// People in a project over the API and the command line: added by email, invited when they have no
// account, their roles changed, removed; the last admin stays; every change is in the audit trail.

let server: TestServer;
let projectId: number;
let admin: ReturnType<typeof client>;
let adminId: string;
const clock = new TestClock('live');

beforeAll(async () => {
  server = await startTestServer({ clock });
  projectId = (await seedProject(server.sql, 'Team')).projectId;
  await seedEnvironment(server.sql, projectId, 'staging');
  const person = await seedUser(server.sql, [projectId], { role: 'admin' });
  adminId = person.userId;
  admin = client(server.url, person.key, { 'x-project-id': String(projectId) });
});
afterAll(async () => server?.close());

describe('members over the API', () => {
  it('when a person with an account is added by email, then they are a member with that role at once, and a second add is a 409', async () => {
    const userId = await createUser(server.sql, { email: 'dana@example.com', name: 'Dana', picture: '' });
    const added = await admin.post('/api/members', { email: 'Dana@Example.com', role: 'viewer' });
    expect(added.status).toBe(201);
    expect(added.body.data.member).toEqual({ user_id: userId, email: 'dana@example.com', name: 'Dana', role: 'viewer', joined_at: expect.any(String) });
    expect((await admin.post('/api/members', { email: 'dana@example.com' })).status).toBe(409);
    const listed = await admin.get('/api/members');
    expect(listed.body.data.members.map((m: { email: string; role: string }) => [m.email, m.role])).toContainEqual(['dana@example.com', 'viewer']);
    expect((await admin.patch(`/api/members/${userId}`, { role: 'member' })).body.data.member.role).toBe('member');
  });

  it('when an email without an account is added, then an invitation is answered once with its link, which signs the person in and joins them once', async () => {
    const invited = await admin.post('/api/members', { email: 'erin@example.com', role: 'member' });
    expect(invited.status).toBe(201);
    const { url, id } = invited.body.data.invitation;
    expect(url).toMatch(/\/invitations\/accept\?token=[\w-]{20,}$/);
    const pending = (await admin.get('/api/members')).body.data.invitations;
    expect(pending).toEqual([expect.objectContaining({ id, email: 'erin@example.com', role: 'member' })]);
    expect(JSON.stringify(pending)).not.toContain(new URL(url).searchParams.get('token'));

    const link = `${server.url}/invitations/accept${new URL(url).search}`;
    const followed = await fetch(link, { redirect: 'manual' });
    expect(followed.status).toBe(303);
    expect(followed.headers.get('location')).toBe(`/projects/${projectId}/runs`);
    expect(followed.headers.get('set-cookie')).toMatch(/^proctor_session=/);
    const [row] = await server.sql<{ role: string }[]>`
      select m.role from memberships m join users u on u.id = m.user_id where u.email = 'erin@example.com' and m.project_id = ${projectId}`;
    expect(row?.role).toBe('member');
    const again = await fetch(link, { redirect: 'manual' });
    expect(again.status).toBe(410);
    expect(await again.text()).toContain('this invitation has been used');
    expect((await admin.get('/api/members')).body.data.invitations).toEqual([]);
  });

  it('when an invitation is older than PROCTOR_INVITE_DAYS, then its link is refused', async () => {
    const { url } = (await admin.post('/api/members', { email: 'late@example.com' })).body.data.invitation;
    clock.advance(8 * 86_400_000);
    try {
      const followed = await fetch(`${server.url}/invitations/accept${new URL(url).search}`, { redirect: 'manual' });
      expect(followed.status).toBe(410);
      expect(await followed.text()).toContain('this invitation has expired');
    } finally {
      clock.advance(-8 * 86_400_000);
    }
  });

  it("when the project's last admin is demoted or removed, then it is a 409 that says why, and nothing changes", async () => {
    const demoted = await admin.patch(`/api/members/${adminId}`, { role: 'member' });
    expect(demoted.status).toBe(409);
    expect(demoted.body.error.message).toMatch(/is the project's last admin: make another member admin first/);
    expect((await admin.delete(`/api/members/${adminId}`)).status).toBe(409);
    const [row] = await server.sql<{ role: string }[]>`select role from memberships where project_id = ${projectId} and user_id = ${adminId}`;
    expect(row?.role).toBe('admin');
  });
});

describe('the audit trail', () => {
  it('when each kind of change is made, then it appears once with its actor, and no secret made is in the events or the log', async () => {
    const since = new Date().toISOString();
    const secrets: string[] = [];
    const key = (await admin.post('/api/keys', { scope: 'report' })).body.data.key;
    secrets.push(key.key.split('_').at(-1));
    await admin.delete(`/api/keys/${key.id}`);
    const webhookSecret = 'audit-webhook-secret-value';
    const slackSecret = 'AuditSlackSecretPart';
    secrets.push(webhookSecret, slackSecret);
    const hook = (await admin.post('/api/notification-destinations', { type: 'webhook', url: 'https://hooks.example.com/x', secret: webhookSecret })).body.data
      .destination;
    const slack = (await admin.post('/api/notification-destinations', { type: 'slack', url: `https://hooks.slack.com/services/T1/B1/${slackSecret}` })).body
      .data.destination;
    await admin.patch(`/api/notification-destinations/${hook.id}`, { when: 'failed' });
    await admin.delete(`/api/notification-destinations/${slack.id}`);
    const env = (await admin.post('/api/environments', { name: 'Audit', slug: 'audit' })).body.data.environment;
    await admin.patch(`/api/environments/${env.id}`, { name: 'Audited' });
    await admin.put('/api/retention-policy', { results_days: 60 });
    expect((await admin.put('/api/quarantine-policy', { threshold: 0.2 })).status).toBe(200);
    const invitation = (await admin.post('/api/members', { email: 'frank@example.com', role: 'viewer' })).body.data.invitation;
    secrets.push(new URL(invitation.url).searchParams.get('token') as string);
    const runId = (await admin.post('/api/test-runs/report', { environment: 'staging' })).body.data.test_run.id;
    await admin.post(`/api/test-runs/${runId}/pin`);
    await admin.delete(`/api/test-runs/${runId}/pin`);
    const snooze = (await admin.post('/api/snoozes', { test_ids: ['0'.repeat(20) + '-' + '1'.repeat(20)], snooze_until: '2099-01-01T00:00:00Z' })).body.data
      .snooze;
    await admin.delete(`/api/snoozes/${snooze.id}`);
    await admin.delete(`/api/environments/${env.id}`);

    const events = (await admin.get(`/api/audit-events?since=${encodeURIComponent(since)}&per_page=200`)).body.data.events as {
      action: string;
      actor: { kind: string; id: string; name: string };
      target: string;
    }[];
    const actions = events.map((event) => event.action).sort();
    expect(actions).toEqual(
      [
        'key.created',
        'key.revoked',
        'destination.created',
        'destination.created',
        'destination.updated',
        'destination.deleted',
        'environment.created',
        'environment.updated',
        'environment.deleted',
        'retention_policy.updated',
        'quarantine_policy.updated',
        'invitation.created',
        'run.pinned',
        'run.unpinned',
        'snooze.created',
        'snooze.deleted',
      ].sort(),
    );
    expect(new Set(events.map((event) => `${event.actor.kind}:${event.actor.id}`))).toEqual(new Set([`user:${adminId}`]));
    const stored = JSON.stringify(await server.sql`select * from audit_events`);
    for (const secret of secrets) {
      expect(stored, secret).not.toContain(secret);
      expect(server.logs.join('\n'), secret).not.toContain(secret);
    }
    const filtered = (await admin.get(`/api/audit-events?since=${encodeURIComponent(since)}&action=destination`)).body.data.events;
    expect(filtered.map((event: { action: string }) => event.action).sort()).toEqual([
      'destination.created',
      'destination.created',
      'destination.deleted',
      'destination.updated',
    ]);
    expect((await admin.get(`/api/audit-events?actor=${adminId}&per_page=1`)).body.pagination.total).toBeGreaterThanOrEqual(events.length);
  });
});

describe('projects and instance admins', () => {
  it('when an instance admin makes a project, then they are its first admin; anyone else is refused', async () => {
    const adminUser = await createUser(server.sql, { email: 'root@example.com', name: 'Root', picture: '', isAdmin: true });
    const instance = client(server.url, await createKey(server.sql, { userId: adminUser }, 'admin'));
    const made = await instance.post('/api/projects', { name: 'Fresh', repo_url: 'https://github.com/acme/fresh.git' });
    expect(made.status).toBe(201);
    expect(made.body.data.project).toMatchObject({ name: 'Fresh', repo_name: 'acme/fresh' });
    const fresh = made.body.data.project.id as number;
    const members = (
      await client(server.url, await createKey(server.sql, { userId: adminUser }, 'read'), { 'x-project-id': String(fresh) }).get('/api/members')
    ).body.data.members;
    expect(members).toEqual([expect.objectContaining({ email: 'root@example.com', role: 'admin' })]);
    expect((await instance.get('/api/projects')).body.data.projects.map((p: { id: number }) => p.id)).toEqual(expect.arrayContaining([projectId, fresh]));
    const refused = await admin.post('/api/projects', { name: 'Not mine', repo_url: '/tmp/x' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('POST /api/projects needs an instance admin');
    const project = client(server.url, (await seedProject(server.sql)).key);
    expect((await project.post('/api/projects', { name: 'Machine', repo_url: '/tmp/x' })).status).toBe(403);
  });
});

describe('people from the command line', () => {
  const cli = async (args: string[], env: Record<string, string> = {}) => {
    const run = spawnProctor(args, { DATABASE_URL: server.db.url, PORT: '', PUBLIC_URL: '', ...env });
    return { code: await run.exited, output: run.output().trim() };
  };

  it('when people are listed, linked by email and added by email with a role, then each says so, and links use the public URL the server recorded', async () => {
    await server.sql`insert into settings (name, value) values ('public_url', 'http://proctor.internal:4321') on conflict (name) do update set value = excluded.value`;
    const listed = await cli(['user', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.output.split('\n')[0]).toBe('id\temail\tname\tadmin\tprojects');
    expect(listed.output).toMatch(/\tdana@example\.com\tDana\tno\t\d+/);
    const link = await cli(['user', 'login-link', '--email', 'dana@example.com']);
    expect(link).toEqual({ code: 0, output: expect.stringMatching(/^http:\/\/proctor\.internal:4321\/sign-in\/link\?token=\S+$/) });
    // A person missing is said in one line, not with the usage: the command line was right.
    const missing = await cli(['user', 'login-link', '--email', 'nobody@example.com']);
    expect(missing).toEqual({ code: 1, output: 'proctor: no user with the email nobody@example.com (npx proctor user list shows them)' });
    const made = await cli(['user', 'create', '--email', 'gus@example.com', '--name', 'Gus']);
    expect(made.code).toBe(0);
    expect(await cli(['member', 'add', '--project', String(projectId), '--email', 'gus@example.com', '--role', 'viewer'])).toEqual({ code: 0, output: 'ok' });
    const invited = await cli(['member', 'add', '--project', String(projectId), '--email', 'hana@example.com']);
    expect(invited.output).toMatch(/^invited: http:\/\/proctor\.internal:4321\/invitations\/accept\?token=/);
    const members = await cli(['member', 'list', '--project', String(projectId)]);
    expect(members.output).toMatch(new RegExp(`^${made.output}\\tgus@example\\.com\\tGus\\tviewer\\t`, 'm'));
    expect((await cli(['member', 'add', '--project', String(projectId), '--email', 'gus@example.com', '--role', 'owner'])).code).toBe(2);
  });
});
