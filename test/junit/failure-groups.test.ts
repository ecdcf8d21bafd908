import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../server/src/sessions/store.ts';
import { multipartBody } from '../helpers/bodies.ts';
import { client } from '../helpers/http.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { runNumber, waitUntil } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, seedUser, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

// A JUnit failure goes the way of a reporter's: it joins a failure group (titled from its message
// and the first frame of its stack in the project's own files), is categorised as a unit test's,
// and is labelled new, then known (still failing), by the webhook, Slack and the compare page alike.

let server: TestServer;
let api: ReturnType<typeof client>;
let hook: Receiver;
let slack: Receiver;
let projectId: number;
let key: string;
let cookie: string;
const clock = new TestClock('live');

beforeAll(async () => {
  [hook, slack] = await Promise.all([startReceiver(), startReceiver()]);
  server = await startTestServer({ clock, env: { PROCTOR_NOTIFY_ALLOW_HOSTS: '127.0.0.1' } });
  const project = await seedProject(server.sql, 'Cart');
  projectId = project.projectId;
  key = project.key;
  await seedEnvironment(server.sql, projectId, 'unit');
  api = client(server.url, key);
  const { userId } = await seedUser(server.sql, [projectId]);
  cookie = `proctor_session=${encodeURIComponent((await createSession(server.sql, userId, new Date())).cookie)}`;
  await api.post('/api/notification-destinations', { type: 'webhook', url: `${hook.url}/proctor`, when: 'failed' });
  await api.post('/api/notification-destinations', { type: 'slack', url: `${slack.url}/services/T0/B0/x`, when: 'failed' });
});

afterAll(async () => {
  await server?.close();
  await hook?.close();
  await slack?.close();
});

// pytest's JUnit XML: no `file`, the module path in `classname`; a failure's text is its traceback.
const PYTEST = (at: string) => `<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="2" time="12.5" timestamp="${at}">
<testcase classname="tests.test_cart" name="test_adds_item" time="4.0"/>
<testcase classname="tests.test_cart.TestTotals" name="test_total_with_tax" time="8.5"><failure message="AssertionError: assert 107 == 108">self = &lt;tests.test_cart.TestTotals object at 0x7f1c&gt;

    def test_total_with_tax(self):
&gt;       assert cart.total(tax=0.08) == 108
E       AssertionError: assert 107 == 108

/usr/lib/python3.12/site-packages/_pytest/python.py:159: in pytest_pyfunc_call
tests/test_cart.py:42: AssertionError</failure></testcase>
</testsuite></testsuites>`;

async function upload(runKey: string, xml: string) {
  const { body, contentType } = multipartBody([{ name: 'junit.xml', content: xml }]);
  const response = await fetch(`${server.url}/api/test-runs/junit?environment=unit&run_key=${runKey}&branch=main`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
    body: new Uint8Array(body),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: { test_run: { id: number }; failed_tests: { test_case_id: string; file_path: string }[] } }).data;
}

/** The Slack message of the run's end. */
async function slackTextOf(runId: number): Promise<string> {
  const shown = await runNumber(server.sql, runId);
  const of = (request: { body: string }) => (JSON.parse(request.body).text as string).includes(`run #${shown} `);
  await waitUntil(() => slack.requests.some(of), 20_000, `the Slack message of run ${runId}`);
  return JSON.parse(slack.requests.find(of)?.body as string).text as string;
}

async function webhookEventOf(runId: number) {
  await waitUntil(async () => hook.requests.some((request) => JSON.parse(request.body).test_run?.id === runId), 20_000, `the webhook of run ${runId}`);
  return JSON.parse(hook.requests.find((request) => JSON.parse(request.body).test_run?.id === runId)?.body as string);
}

describe('a JUnit failure uploaded twice', () => {
  it('when it is uploaded, then it is in one titled failure group, new; uploaded again, it is still failing in the webhook, Slack and the compare page', async () => {
    const first = await upload('build-1', PYTEST('2026-11-28T06:00:00Z'));
    expect(first.failed_tests).toEqual([expect.objectContaining({ file_path: 'tests/test_cart.py' })]);
    const testId = first.failed_tests[0]?.test_case_id as string;

    const read = (await api.get(`/api/test-runs/${first.test_run.id}`)).body.data.test_run;
    // The run's duration is its tests' (from the file's time), not the upload's few milliseconds.
    expect(read.testRun.duration).toBeGreaterThanOrEqual(12_500);
    const failed = read.flattenedSummaryDetails.find((t: { test_case_id: string }) => t.test_case_id === testId);
    expect(failed).toMatchObject({ failure_group_id: expect.stringMatching(/^fg_/), failure_category: 'assertion' });
    const groupId = failed.failure_group_id as string;

    const group = (await api.get(`/api/failure-groups/${groupId}`)).body.data;
    expect(group.failure_group).toMatchObject({ title: 'AssertionError: assert 107 == 108 at test_cart.py:42', category: 'assertion', member_count: 1 });
    expect(group.members).toEqual([expect.objectContaining({ test_case_id: testId, state: 'active', source: 'machine' })]);
    const firstEvent = await webhookEventOf(first.test_run.id);
    expect(firstEvent.failures).toEqual([expect.objectContaining({ test_case_id: testId, label: 'new', failure_group_title: group.failure_group.title })]);
    expect(await slackTextOf(first.test_run.id)).toContain('*new* test_total_with_tax');

    // Its link on the run page opens the group.
    const page = await fetch(`${server.url}/projects/${projectId}/runs/${first.test_run.id}`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const link = `/projects/${projectId}/failure-groups/${encodeURIComponent(groupId)}`;
    expect(await page.text()).toContain(`href="${link}"`);
    const opened = await fetch(`${server.url}${link}`, { headers: { cookie } });
    expect(opened.status).toBe(200);
    expect(await opened.text()).toContain('AssertionError: assert 107 == 108');

    const second = await upload('build-2', PYTEST('2026-11-28T07:00:00Z'));
    expect(second.failed_tests.map((t) => t.test_case_id)).toEqual([testId]);
    const again = (await api.get(`/api/failure-groups/${groupId}`)).body.data.failure_group;
    expect(again).toMatchObject({ title: group.failure_group.title, member_count: 1, occurrence_count: 2, last_test_run_id: second.test_run.id });
    expect((await api.get('/api/failure-groups')).body.data.failure_groups).toHaveLength(1);
    const secondEvent = await webhookEventOf(second.test_run.id);
    expect(secondEvent.failures).toEqual([expect.objectContaining({ test_case_id: testId, label: 'known' })]);
    expect(await slackTextOf(second.test_run.id)).toContain('*known* test_total_with_tax');
    const compared = (await api.get(`/api/test-runs/${second.test_run.id}/compare/${first.test_run.id}`)).body.data.comparison;
    expect(compared.still_failing.tests.map((t: { test_case_id: string }) => t.test_case_id)).toEqual([testId]);
    expect(compared.new_failures.total).toBe(0);
    const comparePage = await fetch(`${server.url}/projects/${projectId}/runs/${second.test_run.id}/compare/${first.test_run.id}`, { headers: { cookie } });
    const html = await comparePage.text();
    expect(comparePage.status).toBe(200);
    const stillFailing = html.slice(html.indexOf('Still failing'));
    expect(stillFailing).toContain('test_total_with_tax');
    expect(html.slice(html.indexOf('New failures'), html.indexOf('Still failing'))).not.toContain('test_total_with_tax');
  });
});

describe('many JUnit failures of a few groups', () => {
  /** Three failures with one message in one class (one group), and another class's failure; `passing` of the three pass. */
  const MANY = (passing: number) => `<testsuite name="com.acme.Stock" tests="4">
${[0, 1, 2]
  .map((n) =>
    n < passing
      ? `<testcase name="reserves ${n}" classname="com.acme.StockTest"/>`
      : `<testcase name="reserves ${n}" classname="com.acme.StockTest"><failure message="stock service unavailable" type="java.net.ConnectException">java.net.ConnectException: stock service unavailable</failure></testcase>`,
  )
  .join('\n')}
<testcase name="ships" classname="com.acme.ShippingTest"><failure message="expected: &lt;1&gt; but was: &lt;2&gt;" type="org.opentest4j.AssertionFailedError"/></testcase>
</testsuite>`;

  it('when they are uploaded twice, then each group counts its members once and a sighting of each failure per upload', async () => {
    const first = await upload('many-1', MANY(0));
    expect(first.failed_tests).toHaveLength(4);
    const second = await upload('many-2', MANY(1));
    expect(second.failed_tests).toHaveLength(3);
    const groups = await server.sql<{ title: string; member_count: number; occurrence_count: number; last_test_run_id: number; events: number }[]>`
      select g.title, g.member_count, g.occurrence_count, g.last_test_run_id,
             (select count(*)::int from failure_group_events e where e.project_id = g.project_id and e.group_id = g.id) as events
      from failure_groups g where g.project_id = ${projectId} and g.title like any (array['%stock service unavailable%', '%expected: <1> but was: <2>%'])
      order by g.member_count desc`;
    expect(groups).toEqual([
      expect.objectContaining({ member_count: 3, occurrence_count: 5, last_test_run_id: second.test_run.id, events: 5 }),
      expect.objectContaining({ member_count: 1, occurrence_count: 2, last_test_run_id: second.test_run.id, events: 2 }),
    ]);
  });
});

describe('JUnit failures that make several groups of one title at once', () => {
  /** One failure text in each of these classes, no stack: a group a class (the class is the place), each titled by the text alone. */
  const SAME_TEXT = (classes: string[]) => `<testsuite name="com.acme.Search" tests="${classes.length}">
${classes.map((name) => `<testcase name="searches" classname="com.acme.${name}"><failure message="index not ready" type="java.lang.IllegalStateException"/></testcase>`).join('\n')}
</testsuite>`;

  const titles = async () =>
    (
      await server.sql<{ title: string }[]>`
        select title from failure_groups where project_id = ${projectId} and title like '%index not ready%' order by title`
    ).map((row) => row.title);

  it('when they are uploaded, then each new group has its own title, numbered after those the project holds, with one member and one sighting', async () => {
    await upload('same-text-1', SAME_TEXT(['AlphaTest', 'BetaTest', 'GammaTest']));
    const title = 'java.lang.IllegalStateException: index not ready';
    expect(await titles()).toEqual([title, `${title} (2)`, `${title} (3)`]);
    // Two known groups and a new one: only the new one takes a title, after the three.
    await upload('same-text-2', SAME_TEXT(['AlphaTest', 'DeltaTest', 'GammaTest']));
    expect(await titles()).toEqual([title, `${title} (2)`, `${title} (3)`, `${title} (4)`]);
    const counts = await server.sql<{ member_count: number; occurrence_count: number; category: string | null }[]>`
      select member_count, occurrence_count, category from failure_groups
      where project_id = ${projectId} and title like '%index not ready%' order by title`;
    expect(counts.map((group) => `${group.member_count}/${group.occurrence_count}`).sort()).toEqual(['1/1', '1/1', '1/2', '1/2']);
    expect(counts.every((group) => group.category !== null)).toBe(true);
  });
});
