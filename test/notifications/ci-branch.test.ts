import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeStory } from '../../server/src/notifications/compose.ts';
import { emailMessage, slackMessage, teamsMessage, webhookEvent } from '../../server/src/notifications/messages.ts';
import { client } from '../helpers/http.ts';
import { seedProjectWithEnvironment, startTestServer, type TestServer } from '../helpers/server.ts';

// A run's branch in a notification is the CI's, whatever branch of the test repository its tests
// ran from, and the message links the CI job that ran it (issue 52, point 6).

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const PIPELINE = 'https://gitlab.example.com/acme/shop/-/pipelines/2002?a=1&b=|2';

describe("a notification of a CI's run", () => {
  it("when the CI's branch is one the test repository lacks, then Slack, Teams, mail and the webhook name the CI's branch and link the CI job", async () => {
    const { key } = await seedProjectWithEnvironment(server.sql, 'staging');
    const api = client(server.url, key);
    const run = (await api.post('/api/test-runs/report', { environment: 'staging' })).body.data.test_run as { id: number };
    // As a trigger leaves a run whose build's branch the repository lacks (the same rule for `proctor-ci run`
    // and Run now): the tests ran from main, the CI's branch is the build's, its job in the metadata.
    await server.sql`
      update test_runs set build_branch = 'feature/banner', test_run_branch = 'main', metadata = ${server.sql.json({ ci_build_url: PIPELINE })}, state = 'passed' where id = ${run.id}`;
    const story = await composeStory(server.sql, run.id, (id) => `${server.url}/runs/${id}`);
    expect(story.run).toMatchObject({ branch: 'feature/banner', ci_job_url: PIPELINE });

    const slack = slackMessage(story).text;
    expect(slack).toContain('branch `feature/banner`');
    expect(slack).toContain(`<${server.url}/runs/${run.id}|Open the run> · <https://gitlab.example.com/acme/shop/-/pipelines/2002?a=1&amp;b=%7C2|CI job>`);
    const mail = emailMessage(story);
    expect(mail.subject).toContain('(feature/banner)');
    expect(mail.text).toContain(`CI job: ${PIPELINE}`);
    expect(mail.html).toContain(`<a href="https://gitlab.example.com/acme/shop/-/pipelines/2002?a=1&amp;b=|2" rel="noreferrer">CI job</a>`);
    expect(webhookEvent(story, 'e1', new Date()).test_run).toMatchObject({ branch: 'feature/banner', ci_job_url: PIPELINE });
    const card = teamsMessage(story).attachments[0]?.content;
    expect(card?.body[1]?.text).toContain('branch feature/banner');
    expect(card?.actions).toEqual([
      { type: 'Action.OpenUrl', title: 'Open the run', url: `${server.url}/runs/${run.id}` },
      { type: 'Action.OpenUrl', title: 'CI job', url: PIPELINE },
    ]);
  });

  it('when the run has no CI job, or one that is not a web address, then no message links one', async () => {
    const { key } = await seedProjectWithEnvironment(server.sql, 'staging');
    const run = (await client(server.url, key).post('/api/test-runs/report', { environment: 'staging', branch: 'main' })).body.data.test_run as { id: number };
    const told = async () => {
      const story = await composeStory(server.sql, run.id, (id) => `${server.url}/runs/${id}`);
      return [slackMessage(story).text, emailMessage(story).text, emailMessage(story).html, JSON.stringify(teamsMessage(story))].join('\n');
    };
    expect(await told()).not.toContain('CI job');
    await server.sql`update test_runs set build_url = 'javascript:alert(1)' where id = ${run.id}`;
    expect(await told()).not.toContain('CI job');
  });
});
