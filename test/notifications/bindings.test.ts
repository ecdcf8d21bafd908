import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../server/src/auth/store.ts';
import { createSession } from '../../server/src/sessions/store.ts';
import { instanceAdmin } from '../helpers/bindings.ts';
import { client } from '../helpers/http.ts';
import { spawnProctor } from '../helpers/process.ts';
import { seedProject, seedUser, startTestServer, type TestServer } from '../helpers/server.ts';

// Repository bindings: an instance admin (and the operator's command line) binds the repositories
// where the server's GitHub App and GitLab token may act for a project; nobody else may, the
// project's own admins included; every bind and unbind is in the project's audit trail, and its
// Settings page shows them. A project's own test repository is bound when it is made.

let server: TestServer;
let projectId: number;
let project: ReturnType<typeof client>;
let root: Awaited<ReturnType<typeof instanceAdmin>>;

beforeAll(async () => {
  server = await startTestServer();
  const seeded = await seedProject(server.sql);
  projectId = seeded.projectId;
  project = client(server.url, seeded.key);
  root = await instanceAdmin(server.sql, server.url);
});

afterAll(async () => server?.close());

const bindingsPath = () => `/api/projects/${projectId}/repository-bindings`;
const events = async (action: string) =>
  (await project.get(`/api/audit-events?action=${action}&per_page=200`)).body.data.events as {
    action: string;
    actor: { name: string };
    target: string;
    before: unknown;
    after: unknown;
  }[];

describe('binding a repository to a project', () => {
  it('when an instance admin binds and unbinds, then the project lists the binding meanwhile and the audit trail has both, with who and what', async () => {
    const bound = await root.api.post(bindingsPath(), { host: 'github', name: 'acme/shop' });
    expect(bound.status, bound.text).toBe(201);
    const binding = bound.body.data.binding;
    expect(binding).toMatchObject({ host: 'github', name: 'acme/shop', created_by: expect.stringMatching(/^Root /) });
    expect((await project.get('/api/repository-bindings')).body.data.bindings).toEqual([binding]);
    // The same repository, in any case, is bound once.
    const again = await root.api.post(bindingsPath(), { host: 'github', name: 'ACME/shop' });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toContain('body.name: github repository ACME/shop is bound to this project already');

    expect((await root.api.delete(`${bindingsPath()}/${binding.id}`)).status).toBe(200);
    expect((await project.get('/api/repository-bindings')).body.data.bindings).toEqual([]);
    expect((await root.api.delete(`${bindingsPath()}/${binding.id}`)).status).toBe(404);
    const [boundEvent] = await events('repository.bound');
    const [unboundEvent] = await events('repository.unbound');
    expect(boundEvent).toMatchObject({ actor: { name: binding.created_by }, target: `repository-binding:${binding.id}`, before: null, after: binding });
    expect(unboundEvent).toMatchObject({ actor: { name: binding.created_by }, target: `repository-binding:${binding.id}`, before: binding, after: null });
  });

  it.each([
    [{ host: 'github', name: 'not a repository' }, 'body.name: must be a GitHub repository, owner/name'],
    [{ host: 'github', name: 'group/sub/name' }, 'body.name: must be a GitHub repository'],
    [{ host: 'gitlab', name: 'nopath' }, "body.name: must be a GitLab project's path"],
    [{ host: 'bitbucket', name: 'acme/shop' }, 'body.host'],
    [{ host: 'github', name: 'acme/shop', extra: true }, 'body'],
  ])('when the binding is %j, then it is a 400 naming the field, and nothing is bound', async (body, message) => {
    const refused = await root.api.post(bindingsPath(), body);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain(message);
    expect((await project.get('/api/repository-bindings')).body.data.bindings).toEqual([]);
  });

  it('when the project does not exist, then binding is a 404', async () => {
    expect((await root.api.post('/api/projects/999999/repository-bindings', { host: 'github', name: 'acme/shop' })).status).toBe(404);
  });

  it("when anyone but an instance admin binds or unbinds (the project's admin by key or session, its key, an instance admin's read key), then it is a 403 naming the operation, and nothing changes", async () => {
    const bindingId = (await root.api.post(bindingsPath(), { host: 'gitlab', name: 'acme/web/shop' })).body.data.binding.id as number;
    const projectAdmin = await seedUser(server.sql, [projectId], { role: 'admin', scope: 'admin' });
    const { cookie, session } = await createSession(server.sql, projectAdmin.userId, new Date());
    // People are told the operation and what it needs; a project's key, that it is a person's operation.
    const callers: [ReturnType<typeof client>, RegExp, RegExp][] = [
      [
        client(server.url, projectAdmin.key),
        /POST \/api\/projects\/\{id\}\/repository-bindings needs an instance admin/,
        /DELETE .*\{binding_id\} needs an instance admin/,
      ],
      [
        client(server.url, undefined, { cookie: `proctor_session=${cookie}`, 'x-csrf-token': session.csrfToken }),
        /POST \/api\/projects\/\{id\}\/repository-bindings needs an instance admin/,
        /DELETE .*\{binding_id\} needs an instance admin/,
      ],
      [project, /a project's key cannot do it/, /a project's key cannot do it/],
      [
        client(server.url, await createKey(server.sql, { userId: root.userId }, 'read')),
        /needs a personal key of scope admin/,
        /needs a personal key of scope admin/,
      ],
    ];
    for (const [caller, bindRefusal, unbindRefusal] of callers) {
      const bind = await caller.post(bindingsPath(), { host: 'github', name: 'other-team/production' });
      expect(bind.status, bind.text).toBe(403);
      expect(bind.body.error.message).toMatch(bindRefusal);
      const unbind = await caller.delete(`${bindingsPath()}/${bindingId}`);
      expect(unbind.status).toBe(403);
      expect(unbind.body.error.message).toMatch(unbindRefusal);
    }
    expect((await project.get('/api/repository-bindings')).body.data.bindings).toMatchObject([{ id: bindingId, host: 'gitlab', name: 'acme/web/shop' }]);
    expect((await events('repository')).filter((e) => e.target === `repository-binding:${bindingId}`)).toHaveLength(1);
    expect((await root.api.delete(`${bindingsPath()}/${bindingId}`)).status).toBe(200);
  });

  it("when the project's Settings page is opened, then it shows the bound repositories to its members and offers binding and unbinding to an instance admin alone", async () => {
    const bindingId = (await root.api.post(bindingsPath(), { host: 'github', name: 'acme/settings-shown' })).body.data.binding.id as number;
    const page = async (userId: string) => {
      const { cookie } = await createSession(server.sql, userId, new Date());
      const response = await fetch(`${server.url}/projects/${projectId}/settings`, { headers: { cookie: `proctor_session=${cookie}` } });
      expect(response.status).toBe(200);
      return response.text();
    };
    const asAdmin = await page((await seedUser(server.sql, [projectId], { role: 'admin' })).userId);
    expect(asAdmin).toContain('Bound repositories');
    expect(asAdmin).toContain('<code>acme/settings-shown</code>');
    expect(asAdmin).not.toContain('repository-bindings');
    const asRoot = await page(root.userId);
    expect(asRoot).toContain(`data-api="POST /api/projects/${projectId}/repository-bindings"`);
    expect(asRoot).toContain(`data-api="DELETE /api/projects/${projectId}/repository-bindings/${bindingId}"`);
    await root.api.delete(`${bindingsPath()}/${bindingId}`);
  });
});

describe('a project made by an instance admin', () => {
  it.each([
    ['https://github.com/acme/fresh.git', [{ host: 'github', name: 'acme/fresh' }]],
    ['git@github.com:acme/over-ssh.git', [{ host: 'github', name: 'acme/over-ssh' }]],
    ['https://gitlab.com/group/sub/tests.git', [{ host: 'gitlab', name: 'group/sub/tests' }]],
    ['https://example.com/acme/elsewhere.git', []],
    ['/srv/tests', []],
  ])('when its test repository is %s, then that repository is bound to it at setup (on GitHub or GitLab only), audited', async (repoUrl, expected) => {
    const made = await root.api.post('/api/projects', { name: `Made ${repoUrl}`, repo_url: repoUrl });
    expect(made.status, made.text).toBe(201);
    const madeId = made.body.data.project.id as number;
    const own = client(server.url, await createKey(server.sql, { projectId: madeId }, 'admin'));
    expect((await own.get('/api/repository-bindings')).body.data.bindings).toMatchObject(expected);
    const audited = (await own.get('/api/audit-events?action=repository.bound')).body.data.events;
    expect(audited.map((e: { after: { name: string } }) => e.after.name)).toEqual(expected.map((b) => b.name));
  });
});

describe('bindings from the command line', () => {
  const cli = async (args: string[]) => {
    const run = spawnProctor(args, { DATABASE_URL: server.db.url, PORT: '', PUBLIC_URL: '' });
    return { code: await run.exited, output: run.output().trim() };
  };

  it('when the operator binds, lists and unbinds, then each says so and the audit trail names the command line', async () => {
    const p = String(projectId);
    expect(await cli(['repository', 'bind', '--project', p, '--github', 'acme/cli'])).toEqual({ code: 0, output: 'bound github acme/cli' });
    const listed = await cli(['repository', 'list', '--project', p]);
    expect(listed.output).toMatch(/^host\tname\tbound_by\tbound_at\ngithub\tacme\/cli\t-\t\d{4}-/);
    expect(await cli(['repository', 'unbind', '--project', p, '--github', 'ACME/cli'])).toEqual({ code: 0, output: 'unbound github acme/cli' });
    const cliEvents = (await events('repository')).filter((e) => e.actor.name === `${os.userInfo().username} (command line)`);
    expect(cliEvents.map((e) => e.action)).toEqual(['repository.unbound', 'repository.bound']);
  }, 180_000);

  it('when the repository is not one, or both hosts are given, then the command says so and binds nothing', async () => {
    const p = String(projectId);
    const before = (await project.get('/api/repository-bindings')).body.data.bindings;
    expect(await cli(['repository', 'bind', '--project', p, '--github', 'not a repo'])).toMatchObject({
      code: 2,
      output: expect.stringContaining('--github: must be a GitHub repository'),
    });
    expect((await cli(['repository', 'bind', '--project', p, '--github', 'a/b', '--gitlab', 'c/d'])).output).toContain('give one of --github');
    expect((await project.get('/api/repository-bindings')).body.data.bindings).toEqual(before);
  }, 180_000);

  it('when the operator makes a project, then it is bound to its own test repository, as one an instance admin makes', async () => {
    const made = await cli(['project', 'create', '--name', 'From the command line', '--repo', 'git@github.com:acme/cli-made.git']);
    expect(made.output).toMatch(/^\d+$/);
    expect((await cli(['repository', 'list', '--project', made.output])).output).toContain('github\tacme/cli-made\t-');
  }, 180_000);
});
