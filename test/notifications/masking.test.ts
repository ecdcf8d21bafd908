import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../server/src/auth/store.ts';
import { client } from '../helpers/http.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, type TestServer } from '../helpers/server.ts';

// A destination's URL is a credential as a whole: the chat services that put theirs in the path
// (Discord, Mattermost, Microsoft Teams, Rocket.Chat) or the query (a Teams Workflows URL's `sig`)
// show only their scheme and host to readers,
// to admins, in the audit trail and in the log; Slack's own hooks show what its type says is public.

const SHAPES = [
  {
    service: 'Discord',
    type: 'webhook',
    url: 'https://discord.com/api/webhooks/1187654321098765432/DiScOrDsEcReT-token_value',
    secrets: ['1187654321098765432', 'DiScOrDsEcReT-token_value', '/api/webhooks'],
    shown: 'https://discord.com/••••',
  },
  {
    service: 'Mattermost',
    type: 'webhook',
    url: 'https://chat.example.com/hooks/xmmsecretkey7nqa1b2c3d4e5f',
    secrets: ['xmmsecretkey7nqa1b2c3d4e5f', '/hooks'],
    shown: 'https://chat.example.com/••••',
  },
  {
    service: 'Microsoft Teams',
    type: 'webhook',
    url: 'https://contoso.webhook.office.com/webhookb2/0f1e2d3c-tenant@4b5a6978-group/IncomingWebhook/TeAmSsEcReTvalue/a1b2c3-user',
    secrets: ['webhookb2', '0f1e2d3c-tenant', 'TeAmSsEcReTvalue', 'IncomingWebhook'],
    shown: 'https://contoso.webhook.office.com/••••',
  },
  {
    service: 'Microsoft Teams Workflows (Logic Apps host)',
    type: 'teams',
    url: 'https://prod-27.westus.logic.azure.com:443/workflows/0f1e2d3c4b5a69788796a5b4c3d2e1f0/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=TeAmSwOrKfLoWsIg_value-1',
    secrets: ['TeAmSwOrKfLoWsIg_value-1', '0f1e2d3c4b5a69788796a5b4c3d2e1f0', '/workflows', 'sig='],
    shown: 'https://prod-27.westus.logic.azure.com/••••',
  },
  {
    service: 'Microsoft Teams Workflows (Power Platform host)',
    type: 'teams',
    url: 'https://default0f1e2d3c4b5a.69.environment.api.powerplatform.com:443/powerautomate/automations/direct/workflows/a1b2c3d4e5f6/triggers/manual/paths/invoke?api-version=1&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=PoWeRpLaTfOrMsIg-2',
    secrets: ['PoWeRpLaTfOrMsIg-2', 'a1b2c3d4e5f6', '/powerautomate', 'sig='],
    shown: 'https://default0f1e2d3c4b5a.69.environment.api.powerplatform.com/••••',
  },
  {
    service: 'Rocket.Chat',
    type: 'webhook',
    url: 'https://rocket.example.org:3000/hooks/RoCkEtId42/RoCkEtSeCrEtToKeN',
    secrets: ['RoCkEtId42', 'RoCkEtSeCrEtToKeN', '/hooks'],
    shown: 'https://rocket.example.org:3000/••••',
  },
  {
    service: 'Slack',
    type: 'slack',
    url: 'https://hooks.slack.com/services/T0WORKSPACE/B0CHANNEL/SlAcKsEcReTvAlUe',
    secrets: ['T0WORKSPACE', 'B0CHANNEL', 'SlAcKsEcReTvAlUe'],
    shown: 'https://hooks.slack.com/services/T…/B…/••••',
  },
  {
    service: 'Discord through its Slack-compatible endpoint',
    type: 'slack',
    url: 'https://discord.com/api/webhooks/1187654321098765432/DiScOrDsEcReT-token_value/slack',
    secrets: ['1187654321098765432', 'DiScOrDsEcReT-token_value', '/api/webhooks'],
    shown: 'https://discord.com/••••',
  },
  {
    service: 'a receiver with credentials in user:password@ and the query',
    type: 'webhook',
    url: 'https://ci:basic-password@hooks.example.com/proctor/path-secret?token=query-secret&team=web#fragment-secret',
    secrets: ['basic-password', 'path-secret', 'query-secret', 'team=web', 'fragment-secret', 'ci:'],
    shown: 'https://hooks.example.com/••••',
  },
] as const;

let server: TestServer;
let admin: ReturnType<typeof client>;
let reader: ReturnType<typeof client>;
let personalReader: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer({
    env: {
      PROCTOR_NOTIFY_ALLOW_HOSTS:
        'discord.com,chat.example.com,contoso.webhook.office.com,prod-27.westus.logic.azure.com,default0f1e2d3c4b5a.69.environment.api.powerplatform.com,rocket.example.org,hooks.slack.com,hooks.example.com',
    },
  });
  const { projectId, key } = await seedProject(server.sql);
  await seedEnvironment(server.sql, projectId, 'staging');
  admin = client(server.url, key);
  reader = client(server.url, await createKey(server.sql, { projectId }, 'read'));
  personalReader = client(server.url, (await seedUser(server.sql, [projectId], { role: 'viewer', scope: 'read' })).key, { 'x-project-id': String(projectId) });
});

afterAll(async () => {
  await server?.close();
});

describe("a destination's URL", () => {
  it.each(SHAPES)(
    'when a $service URL is made, changed and removed, then readers, admins, the audit trail and the log see its scheme and host alone',
    async (shape) => {
      const made = await admin.post('/api/notification-destinations', { type: shape.type, url: shape.url });
      expect(made.status, made.text).toBe(201);
      const { id } = made.body.data.destination as { id: number };
      expect(made.body.data.destination.url).toBe(shape.shown);
      const changed = await admin.patch(`/api/notification-destinations/${id}`, { when: 'failed' });
      expect(changed.body.data.destination.url).toBe(shape.shown);

      const reads = [
        await reader.get(`/api/notification-destinations/${id}`),
        await reader.get('/api/notification-destinations'),
        await personalReader.get(`/api/notification-destinations/${id}`),
        await personalReader.get('/api/notification-destinations'),
      ];
      for (const read of reads) expect(read.status, read.text).toBe(200);
      expect(reads[0]?.body.data.destination.url).toBe(shape.shown);

      expect((await admin.delete(`/api/notification-destinations/${id}`)).status).toBe(200);
      const audit = await admin.get(`/api/audit-events?per_page=100`);
      expect(audit.status, audit.text).toBe(200);
      const events = (audit.body.data.events as { target: string; action: string; before: { url?: string } | null; after: { url?: string } | null }[]).filter(
        (event) => event.target === `destination:${id}`,
      );
      expect(events.map((event) => event.action).sort()).toEqual(['destination.created', 'destination.deleted', 'destination.updated']);
      for (const event of events) for (const side of [event.before, event.after]) if (side) expect(side.url).toBe(shape.shown);

      const shown = [made.text, changed.text, ...reads.map((read) => read.text), audit.text, server.logs.join('\n')].join('\n');
      for (const secret of shape.secrets) expect(shown).not.toContain(secret);
    },
  );
});
