import { createHash } from 'node:crypto';
import { attempt, attemptsOf, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { testId } from '../helpers/server.ts';

// What an upgrade must keep: a project filled through the API as teams fill it (a second
// environment, a member who accepted an invitation, keys, runs with passing, failing, flaky and
// skipped tests, a failure group, a snooze, attachments, a webhook destination and its deliveries,
// a signed-in session), and what the API answers about it. A release's fixture is made by that
// release (test/upgrade/make-fixture.ts); test/upgrade/upgrade.test.ts starts this version on it.

/** The secrets of a fixture: test data of a throwaway server, kept beside its database. */
export interface FixtureSecrets {
  adminKey: string;
  readKey: string;
  /** `proctor_session=…` of the demo user, signed in by the demo's link. */
  session: string;
  /** Attachments by name, with the sha256 of their bytes. */
  attachments: { name: string; sha256: string }[];
}

export type Api = ReturnType<typeof client>;

const ATTACHMENTS = [
  { name: 'screenshot', content_type: 'image/png', bytes: Buffer.from('not really a png, but bytes that must come back') },
  { name: 'trace', content_type: 'application/zip', bytes: Buffer.alloc(40_000, 'trace bytes ') },
];

async function ok<T extends { status: number; text: string }>(what: string, answer: Promise<T>): Promise<T> {
  const settled = await answer;
  if (settled.status >= 300) throw new Error(`${what}: ${settled.status} ${settled.text}`);
  return settled;
}

/** Fills the demo project of a fresh server; `signInLink` is the demo's printed link, `webhookUrl` a receiver's. */
export async function populate(url: string, adminKey: string, signInLink: string, webhookUrl: string): Promise<FixtureSecrets> {
  const api = client(url, adminKey);
  const signedIn = await fetch(`${url}${signInLink}`, { redirect: 'manual' });
  const session = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
  // A fixture is kept for years: the retention pass of a later server must not age its runs out.
  await ok('retention', api.put('/api/retention-policy', { results_days: 36_500, artifacts_days: 36_500 }));
  await ok('environment', api.post('/api/environments', { name: 'Staging', slug: 'staging' }));
  const readKey = (await ok('key', api.post('/api/keys', { scope: 'read' }))).body.data.key.key as string;
  const invitation = (await ok('invitation', api.post('/api/members', { email: 'member@fixture.invalid', role: 'member' }))).body.data.invitation;
  await fetch(`${url}/invitations/accept${new URL(invitation.url).search}`, { redirect: 'manual' });
  await ok('destination', api.post('/api/notification-destinations', { type: 'webhook', url: webhookUrl, secret: 'a fixture secret' }));
  await ok('snooze', api.post('/api/snoozes', { test_ids: [testId(4)], snooze_until: '2099-01-01T00:00:00Z' }));
  for (let run = 1; run <= 3; run++) await reportRun(api, run);
  const runId = (await api.get('/api/test-runs?environment=staging')).body.data.test_runs[0].id as number;
  await attach(url, api, runId);
  return { adminKey, readKey, session, attachments: ATTACHMENTS.map((a) => ({ name: a.name, sha256: sha256(a.bytes) })) };
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A run of six tests on staging: passed, failed (a failure group), flaky, skipped, snoozed and failing, passed. */
async function reportRun(api: Api, run: number): Promise<void> {
  const runId = (await ok('run', api.post('/api/test-runs/report', { environment: 'staging', branch: 'main', commit: `${run}`.repeat(40), total_shards: 1 })))
    .body.data.test_run.id;
  const tests = [1, 2, 3, 4, 5, 6].map((n) => listedTest(testId(n), { title: `test ${n}`, file_path: `spec${n % 2}.spec.ts` }));
  await ok('begin', api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests, complete: true }));
  const failing = attemptsOf(testId(2), 'unexpected', 'Error: expected 200, received 500');
  const final = failing.at(-1)?.final;
  if (final) final.failure_group_id = 'server-error';
  const results = [
    attempt(testId(1), { duration: 100 * run }),
    ...failing,
    ...attemptsOf(testId(3), 'flaky'),
    attempt(testId(4), { final: 'skipped' }),
    ...attemptsOf(testId(5), run === 3 ? 'unexpected' : 'expected'),
    attempt(testId(6)),
  ];
  await ok('results', api.post(`/api/test-runs/${runId}/results`, { shard: 1, results }));
  // As the reporter does for each final failure that names its group.
  await ok('failure group', api.post('/api/failure-groups/server-error/members', { test_run_id: runId, test_case_id: testId(2) }));
  await ok('end', api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed', errors: [] }));
}

async function attach(url: string, api: Api, runId: number): Promise<void> {
  const declared = await ok(
    'attachments',
    api.post(`/api/test-runs/${runId}/attachments`, {
      attachments: ATTACHMENTS.map((a) => ({
        test_id: testId(2),
        retry: 0,
        name: a.name,
        content_type: a.content_type,
        sha256: sha256(a.bytes),
        size_bytes: a.bytes.length,
      })),
    }),
  );
  const dispositions = declared.body.data.attachments as { upload_url: string }[];
  for (const [i, disposition] of dispositions.entries()) {
    const target = new URL(disposition.upload_url, url);
    const put = await fetch(target, { method: 'PUT', body: ATTACHMENTS[i]?.bytes });
    if (put.status !== 200) throw new Error(`upload: ${put.status} ${await put.text()}`);
  }
}

/**
 * What the API answers about the fixture's project, each answer made comparable across servers:
 * signed URLs without their expiry and signature, the server's own address as `<server>`. Time
 * windows are fixed to the fixture's days: an answer that depends on today would drift.
 */
export async function readBack(url: string, api: Api, days: { from: string; to: string }): Promise<Record<string, unknown>> {
  const window = `start_date=${days.from}&end_date=${days.to}`;
  const paths = [
    '/api/environments',
    '/api/test-runs',
    '/api/failure-groups',
    '/api/snoozes',
    '/api/test-cases/v2?project_id=1',
    `/api/v1/analytics/test-runs?${window}`,
    `/api/v1/analytics/test-counts?${window}`,
    `/api/v1/analytics/test-cases?${window}`,
    '/api/quarantine-policy',
    '/api/retention-policy',
    '/api/notification-destinations',
    '/api/members',
    '/api/keys',
    '/api/audit-events',
  ];
  const answers: Record<string, unknown> = {};
  for (const path of paths) answers[path] = (await ok(path, api.get(path))).body;
  const runs = (answers['/api/test-runs'] as { data: { test_runs: { id: number }[] } }).data.test_runs;
  for (const run of runs) {
    answers[`/api/test-runs/${run.id}`] = (await ok('run', api.get(`/api/test-runs/${run.id}`))).body;
    const deliveries = `/api/notification-deliveries?test_run_id=${run.id}`;
    answers[deliveries] = (await ok(deliveries, api.get(deliveries))).body;
  }
  return comparableAnswers(answers, url) as Record<string, unknown>;
}

/** Keys whose values change on their own between two reads: when a key was last used. */
const VOLATILE = new Set(['last_used_at']);

/** Answers with the server's address as `<server>`, and signed links (their expiry, signature or token, which roll over daily) without their secret part. */
export function comparableAnswers(value: unknown, url: string): unknown {
  if (typeof value === 'string')
    return value
      .split(url)
      .join('<server>')
      .replace(/([?&])(expires|signature|sig|token)=[^&]*/g, '$1$2=…');
  if (Array.isArray(value)) return value.map((item) => comparableAnswers(item, url));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => !VOLATILE.has(key))
        .map(([key, item]) => [key, comparableAnswers(item, url)]),
    );
  }
  return value;
}
