import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { seedProject, seedUser, startTestServer, type TestServer } from '../helpers/server.ts';

// The audit trail's action filter: an action, or its object alone, taken as text and never as a
// pattern (LIKE's `%` and `_` match only themselves).

let server: TestServer;
let admin: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  const { projectId } = await seedProject(server.sql, 'Audited');
  const person = await seedUser(server.sql, [projectId], { role: 'admin' });
  admin = client(server.url, person.key, { 'x-project-id': String(projectId) });
  const environment = (await admin.post('/api/environments', { name: 'Staging', slug: 'staging' })).body.data.environment;
  await admin.patch(`/api/environments/${environment.id}`, { name: 'Staged' });
  await admin.put('/api/retention-policy', { results_days: 60 });
});
afterAll(async () => server?.close());

async function actionsFiltered(action: string): Promise<{ actions: string[]; total: number }> {
  const answer = await admin.get(`/api/audit-events?action=${encodeURIComponent(action)}&per_page=200`);
  expect(answer.status).toBe(200);
  return { actions: answer.body.data.events.map((event: { action: string }) => event.action).sort(), total: answer.body.pagination.total };
}

describe('the audit trail filtered by action', () => {
  it('when the filter names an object or an action, then its events are answered', async () => {
    expect((await actionsFiltered('environment')).actions).toEqual(['environment.created', 'environment.updated']);
    expect((await actionsFiltered('environment.updated')).actions).toEqual(['environment.updated']);
    expect((await actionsFiltered('retention_policy')).actions).toEqual(['retention_policy.updated']);
  });

  it('when the filter holds % or _, then they match only themselves: no action holds them, so none is answered', async () => {
    for (const filter of ['%', '%%', '_', 'environmen_', 'retention%', 'retention_polic_', '\\', 'environment\\']) {
      expect(await actionsFiltered(filter), filter).toEqual({ actions: [], total: 0 });
    }
  });
});
