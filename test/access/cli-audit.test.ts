import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../server/src/sessions/store.ts';
import { changeFields } from '../../server/src/dashboard/team-pages.tsx';
import { client } from '../helpers/http.ts';
import { spawnProctor } from '../helpers/process.ts';
import { seedUser, startTestServer, type TestServer } from '../helpers/server.ts';

// Every change made with the `proctor` command is in the audit trail, its actor the operating
// system's user who ran it; the dashboard's audit page shows each change as fields a person reads
// (`field: old → new`, `field: value`), escaped, never as raw JSON.

let server: TestServer;
const osUser = os.userInfo().username;

const proctor = async (...args: string[]) => {
  const run = spawnProctor(args, { DATABASE_URL: server.db.url, PORT: '', PUBLIC_URL: '' });
  const code = await run.exited;
  expect(code, run.output()).toBe(0);
  return run.output().trim();
};

interface Event {
  action: string;
  actor: { kind: string; id: string | null; name: string };
  target: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

describe('changes made with the command line', () => {
  let projectId: string;
  let events: Event[];
  let admin: Awaited<ReturnType<typeof seedUser>>;

  beforeAll(async () => {
    projectId = await proctor('project', 'create', '--name', 'Made <by> the CLI');
    const key = await proctor('key', 'create', '--project', projectId, '--scope', 'report');
    await proctor('key', 'revoke', '--key', key);
    const userId = await proctor('user', 'create', '--email', 'cli-person@example.com', '--name', 'CLI Person');
    await proctor('member', 'add', '--project', projectId, '--user', userId, '--role', 'viewer');
    admin = await seedUser(server.sql, [Number(projectId)], { role: 'admin' });
    const answer = await client(server.url, admin.key, { 'x-project-id': projectId }).get('/api/audit-events?per_page=200');
    expect(answer.status).toBe(200);
    events = answer.body.data.events;
  }, 300_000);

  it("when a project is made, a key made and revoked and a person added, then each is in the project's trail with the OS user as actor", () => {
    const cli = events.filter((event) => event.actor.kind === 'cli');
    expect(cli.map((event) => event.action).sort()).toEqual(['key.created', 'key.revoked', 'member.added', 'project.created']);
    for (const event of cli) expect(event.actor).toEqual({ kind: 'cli', id: osUser, name: `${osUser} (command line)` });
    const project = cli.find((event) => event.action === 'project.created');
    expect(project?.after).toMatchObject({ id: Number(projectId), name: 'Made <by> the CLI', repo_url: null });
    const created = cli.find((event) => event.action === 'key.created');
    expect(created?.after).toMatchObject({ scope: 'report', kind: 'project' });
    expect(JSON.stringify(created?.after)).not.toMatch(/prc_p_[0-9a-f]+_[0-9a-f]{48}/);
    expect(cli.find((event) => event.action === 'key.revoked')?.before).toMatchObject({ id: created?.after?.id, scope: 'report' });
  });

  it('when an operator makes a person, then the instance-wide change is recorded with the OS user as actor', async () => {
    const [row] = await server.sql<{ actor_kind: string; actor_id: string; project_id: number | null }[]>`
      select actor_kind, actor_id, project_id from audit_events where action = 'user.created' and after->>'email' = 'cli-person@example.com'`;
    expect(row).toEqual({ actor_kind: 'cli', actor_id: osUser, project_id: null });
  });

  it('when the audit page is opened, then each change shows its fields, escaped, and no raw JSON', async () => {
    const { cookie } = await createSession(server.sql, admin.userId, new Date());
    const response = await fetch(`${server.url}/projects/${projectId}/audit`, { headers: { cookie: `proctor_session=${cookie}` } });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain(`${osUser} (command line)`);
    // The page's renderer escapes `<` and `&` in text (a `>` there makes no tag).
    expect(html).toContain('<span class="field">name</span>: Made &lt;by> the CLI');
    expect(html).toContain('<span class="field">scope</span>: report');
    expect(html).not.toContain('{&quot;');
    expect(html).not.toContain('Made <by>');
  });
});

describe('the fields of a change', () => {
  it('when a field changed, then it reads field: old → new, and only changed fields are listed', () => {
    const html = changeFields({ name: 'Staging', slug: 'staging', match: ['a'] }, { name: 'Staged', slug: 'staging', match: ['a', 'b'] });
    expect(html).toBe(
      '<ul class="fields"><li><span class="field">name</span>: <del>Staging</del> → <ins>Staged</ins></li><li><span class="field">match</span>: <del>a</del> → <ins>a, b</ins></li></ul>',
    );
  });

  it('when an object was made or removed, then its fields are listed with their values, nested ones by their path, markup escaped', () => {
    expect(changeFields(null, { role: 'viewer', created_by: { id: 'u1', name: '<script>' }, note: null })).toBe(
      '<ul class="fields"><li><span class="field">role</span>: viewer</li><li><span class="field">created_by.id</span>: u1</li><li><span class="field">created_by.name</span>: &lt;script></li><li><span class="field">note</span>: none</li></ul>',
    );
    expect(changeFields({ scope: 'admin' }, null)).toBe(
      '<p class="muted">removed:</p><ul class="fields"><li><span class="field">scope</span>: admin</li></ul>',
    );
    expect(changeFields(null, null)).toBe('');
  });
});
