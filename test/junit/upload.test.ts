import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { planted } from '../helpers/planted.ts';
import { proctorCi } from '../helpers/process.ts';
import { runIdLinkedIn } from '../helpers/runs.ts';
import { seedEnvironment, seedProject, startTestServer, type TestServer } from '../helpers/server.ts';

// `proctor-ci upload junit` against a server on loopback: files streamed to
// `POST /api/test-runs/junit`, stored whole or not at all.

let server: TestServer;
let key: string;
let api: ReturnType<typeof client>;
let dir: string;

beforeAll(async () => {
  server = await startTestServer({ env: { PROCTOR_UPLOAD_LIMIT_MB: '1' } });
  const project = await seedProject(server.sql);
  key = project.key;
  api = client(server.url, key);
  await seedEnvironment(server.sql, project.projectId, 'unit');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-junit-'));
});
afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function write(name: string, xml: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, xml);
  return file;
}

/** The command as a CI job runs it; `env` adds to PROCTOR_URL and PROCTOR_API_KEY. */
function upload(args: string[], env: Record<string, string> = {}): ReturnType<typeof proctorCi> {
  return proctorCi(['upload', 'junit', ...args], { url: server.url, key }, env);
}

const CART = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="com.acme.CartTest" timestamp="2026-11-26T08:00:00Z">
  <testcase name="addsItem" classname="com.acme.CartTest" time="0.012"/>
  <testcase name="removesItem" classname="com.acme.CartTest" time="0.5">
    <failure message="expected: &lt;1&gt; but was: &lt;2&gt;" type="org.opentest4j.AssertionFailedError">org.opentest4j.AssertionFailedError: expected: &lt;1&gt; but was: &lt;2&gt;
	at com.acme.CartTest.removesItem(CartTest.java:42)</failure>
    <rerunFailure message="expected: &lt;1&gt; but was: &lt;3&gt;" type="org.opentest4j.AssertionFailedError" time="0.4"><stackTrace>at com.acme.CartTest.removesItem(CartTest.java:42)</stackTrace></rerunFailure>
  </testcase>
  <testcase name="checksOut" classname="com.acme.CartTest" time="0.3">
    <flakyFailure message="Timeout after 100ms" type="java.util.concurrent.TimeoutException" time="0.1"/>
  </testcase>
  <testcase name="pays" classname="com.acme.CartTest"><skipped message="payments are off"/></testcase>
</testsuite>`;

const SEARCH = `<testsuites><testsuite name="com.acme.SearchTest"><testcase name="finds" classname="com.acme.SearchTest" time="1"/></testsuite></testsuites>`;

const json = (stdout: string) => JSON.parse(stdout);

async function runOf(id: number) {
  return (await api.get(`/api/test-runs/${id}`)).body.data.test_run;
}

describe('proctor-ci upload junit', () => {
  it('when a Surefire file is uploaded, then its tests, outcomes, errors, retries and skips are a run, and the command exits 1 on its failure', async () => {
    const result = await upload([write('cart.xml', CART), write('search.xml', SEARCH), '--environment', 'unit', '--run-key', 'build-1', '--json'], {
      GITLAB_CI: 'true',
      CI_PIPELINE_ID: '77',
      CI_COMMIT_SHA: 'c'.repeat(40),
      CI_COMMIT_BRANCH: 'main',
    });
    expect(result.code, result.stderr).toBe(1);
    const answer = json(result.stdout);
    expect(answer).toMatchObject({
      exit_code: 1,
      files: [
        { name: 'cart.xml', testcases: 4 },
        { name: 'search.xml', testcases: 1 },
      ],
      counts: { tests: 5, passed: 2, failed: 1, flaky: 1, skipped: 1, failed_snoozed: 0 },
      failed_tests: [{ title: 'removesItem', file_path: 'com.acme.CartTest', snoozed: false }],
      test_run: { state: 'failed' },
    });
    const run = await runOf(answer.test_run.id);
    // The answer names the run as pages do, by its number in the project, beside the id its URLs use.
    expect(answer.test_run).toMatchObject({ id: run.testRun.id, number: run.testRun.number });
    expect(run.testRun).toMatchObject({
      state: 'failed',
      total_count: 5,
      failed_count: 1,
      flaky_count: 1,
      skipped_count: 1,
      commit: 'c'.repeat(40),
      build_branch: null,
    });
    const byTitle = Object.fromEntries(run.flattenedSummaryDetails.map((d: { title: string }) => [d.title, d]));
    expect(byTitle.removesItem).toMatchObject({ status: 'failed', retries: 1, failure_group_id: expect.stringMatching(/^fg_/) });
    expect(byTitle.removesItem.error_message).toContain('expected: <1> but was: <3>');
    expect(byTitle.checksOut).toMatchObject({ status: 'flaky', retries: 1 });
    expect(byTitle.pays).toMatchObject({ status: 'skipped', skip_reason: 'payments are off' });
    expect(byTitle.finds).toMatchObject({ status: 'passed', duration: 1000, file_path: 'com.acme.SearchTest' });
  });

  it('when a build uploads two shards under one key, then they join one run, which ends with the second; a retried shard stores nothing twice', async () => {
    const first = await upload([write('a.xml', SEARCH), '--environment', 'unit', '--run-key', 'build-2', '--shard', '1/2', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const runId = json(first.stdout).test_run.id;
    expect((await runOf(runId)).testRun.state).toBe('running');
    const again = await upload([write('a.xml', SEARCH), '--environment', 'unit', '--run-key', 'build-2', '--shard', '1/2', '--json']);
    expect(json(again.stdout)).toMatchObject({ test_run: { id: runId }, files: [], counts: { tests: 1 } });
    const second = await upload([
      write('b.xml', CART.replace(/CartTest/g, 'OtherTest')),
      '--environment',
      'unit',
      '--run-key',
      'build-2',
      '--shard',
      '2/2',
      '--json',
    ]);
    expect(second.code).toBe(1);
    expect(json(second.stdout).test_run.id).toBe(runId);
    const run = await runOf(runId);
    expect(run.testRun).toMatchObject({ state: 'failed', total_count: 5, total_shards: 2 });
    const [stored] = await server.sql<{ count: number }[]>`select count(*)::int as count from test_results where test_run_id = ${runId}`;
    // 1 + (1 + 2 + 2 + 1) attempts: one each, two for the rerun and for the flaky test.
    expect(stored?.count).toBe(7);
  });

  it('when a file is uploaded without --json, then the summary names the run by its number in the project and links it by its id', async () => {
    const result = await upload([write('search.xml', SEARCH), '--environment', 'unit', '--run-key', 'build-numbered']);
    expect(result.code, result.stderr).toBe(0);
    const runId = runIdLinkedIn(result.stdout);
    const { number } = (await runOf(runId)).testRun;
    expect(result.stdout.split('\n')[0]).toBe(`Proctor run #${number}: 1 file(s), 1 testcase(s) uploaded; 1 tests: 1 passed, 0 failed, 0 flaky, 0 skipped`);
  });

  it('when every failure is snoozed, then --forgive-snoozed exits 0 and without it the command still exits 1', async () => {
    const first = json((await upload([write('cart.xml', CART), '--environment', 'unit', '--json'])).stdout);
    const failing = first.failed_tests[0].test_case_id;
    const snoozed = await api.post('/api/snoozes', {
      test_ids: [failing],
      snooze_until: new Date(Date.now() + 86_400_000).toISOString(),
      description: 'known',
    });
    expect(snoozed.status).toBe(200);
    const forgiven = await upload([write('cart.xml', CART), '--environment', 'unit', '--forgive-snoozed']);
    expect(forgiven.code, forgiven.stdout).toBe(0);
    expect(forgiven.stdout).toContain('1 failed (1 snoozed)');
    expect(forgiven.stdout).toContain('Every failure is snoozed');
    const unforgiven = await upload([write('cart.xml', CART), '--environment', 'unit']);
    expect(unforgiven.code).toBe(1);
  });

  it.each([
    ['broken.xml', `<testsuite name="s">\n<testcase name="a">\n</testsuite>`, 'broken.xml:3: is not well-formed XML'],
    ['report.html', '<html>\n<body/></html>', 'report.html:1: is not JUnit XML: its root element is <html>'],
  ])('when one of the files is %s, then the upload is refused with a 400 naming the file and line, and nothing of it is stored', async (name, xml, message) => {
    const before = await server.sql`select count(*)::int as runs from test_runs`;
    const result = await upload([write('good.xml', SEARCH), write(name, xml), '--environment', 'unit', '--run-key', `refused-${name}`]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`HTTP 400 from /api/test-runs/junit: ${message}`);
    expect(await server.sql`select count(*)::int as runs from test_runs`).toEqual(before);
  });

  it('when a test appears again far from its first place, then it is another test (`t3 [2]`), the same in the next upload; in another file or shard of the run it is refused', async () => {
    const many = Array.from({ length: 1500 }, (_, i) => `<testcase classname="c" name="t${i}" time="0"/>`);
    const farXml = `<testsuite name="s" tests="1501">\n${many.join('\n')}\n<testcase classname="c" name="t3" time="0"/>\n</testsuite>`;
    const far = await upload([write('far.xml', farXml), '--environment', 'unit', '--run-key', 'far', '--json']);
    expect(far.code).toBe(0);
    const answer = json(far.stdout);
    expect(answer.files).toEqual([
      expect.objectContaining({ name: 'far.xml', testcases: 1501, tests: 1501, totals: { tests: 1501, failures: 0, errors: 0, skipped: 0 }, differences: [] }),
    ]);
    const ids = async (key: string) =>
      (
        await server.sql<{ test_case_id: string; title: string }[]>`
        select t.test_case_id, t.title from test_run_tests t join test_runs r on r.id = t.test_run_id
        where r.run_key = ${key} and (t.title = 't3' or t.title like 't3 %') order by t.title`
      ).map((row) => [row.title, row.test_case_id]);
    const first = await ids('far');
    expect(first.map(([title]) => title)).toEqual(['t3', 't3 [2]']);
    expect((await upload([write('far.xml', farXml), '--environment', 'unit', '--run-key', 'far-again'])).code).toBe(0);
    expect(await ids('far-again')).toEqual(first);

    const twoFiles = await upload([write('a.xml', SEARCH), write('b.xml', SEARCH), '--environment', 'unit', '--run-key', 'two-files']);
    expect(twoFiles.code).toBe(2);
    expect(twoFiles.stderr).toContain('b.xml:1: testcase "finds" of com.acme.SearchTest appears again in another file of this upload');
    expect(await server.sql`select id from test_runs where run_key = 'two-files'`).toEqual([]);

    const one = await upload([write('one.xml', SEARCH), '--environment', 'unit', '--run-key', 'overlap', '--shard', '1/2']);
    expect(one.code).toBe(0);
    const second = await upload([write('two.xml', SEARCH), '--environment', 'unit', '--run-key', 'overlap', '--shard', '2/2']);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain('two.xml:1: testcase "finds" of com.acme.SearchTest appears again');
  });

  it('when a file is over the upload limit, then it is refused naming the file and the line it reached', async () => {
    const lines = Array.from({ length: 30_000 }, (_, i) => `<testcase classname="c" name="t${i}" time="0"/>`);
    const result = await upload([write('big.xml', `<testsuite name="big">\n${lines.join('\n')}\n</testsuite>`), '--environment', 'unit']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/big\.xml:\d+: is larger than the upload limit of 1 MB a file \(PROCTOR_UPLOAD_LIMIT_MB\)/);
  });

  it('when the body is not multipart or names no environment, then the API answers 400 naming the field', async () => {
    const raw = await fetch(`${server.url}/api/test-runs/junit?environment=unit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/xml' },
      body: SEARCH,
    });
    expect(raw.status).toBe(400);
    expect((await raw.json()).error.message).toMatch(/^body: must be multipart\/form-data/);
    const noEnvironment = await fetch(`${server.url}/api/test-runs/junit`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    expect(noEnvironment.status).toBe(400);
    expect(await noEnvironment.text()).toContain('query.environment');
    const unknown = await upload([write('s.xml', SEARCH), '--environment', 'no where']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('query.environment: must be URL-friendly');
  });

  it('when Proctor cannot be reached, then the command exits 3', async () => {
    const result = await upload([write('s.xml', SEARCH), '--environment', 'unit'], { PROCTOR_URL: 'http://127.0.0.1:9' });
    expect(result.code).toBe(3);
  });
});

/** A testcase whose output names each path as Playwright's junit reporter names its files. */
function naming(paths: string[]): string {
  const output = paths.map((named) => `[[ATTACHMENT|${named}]]`).join('\n');
  return `<testsuite name="files"><testcase name="names files" classname="files" time="0.1"><failure message="boom">boom</failure><system-out>${output}</system-out></testcase></testsuite>`;
}

async function attachedTo(runId: number): Promise<{ name: string; sha256: string }[]> {
  return server.sql<{ name: string; sha256: string }[]>`
    select a.name, b.sha256 from test_attachments a join artifact_blobs b on b.id = a.blob_id where a.test_run_id = ${runId} order by a.name`;
}

async function blobsOf(hashes: string[]): Promise<number> {
  const [row] = await server.sql<{ count: number }[]>`select count(*)::int as count from artifact_blobs where sha256 in ${server.sql(hashes)}`;
  return row?.count as number;
}

describe('proctor-ci upload junit: the files a report names', () => {
  it('when the output names ../, an absolute path and symbolic links out of the folder, then each is skipped with a warning naming it and the server holds none', async () => {
    const root = fs.mkdtempSync(path.join(dir, 'names-'));
    const reports = path.join(root, 'reports');
    const secrets = {
      parent: planted(path.join(root, 'config')),
      absolute: planted(path.join(root, 'elsewhere', 'id_ed25519')),
      linked: planted(path.join(root, 'elsewhere', 'npmrc.txt')),
      inFolder: planted(path.join(root, 'elsewhere', 'folder', 'token.txt')),
    };
    const inside = planted(path.join(reports, 'inside.txt'));
    fs.symlinkSync(path.join(root, 'elsewhere', 'npmrc.txt'), path.join(reports, 'link.txt'));
    fs.symlinkSync(path.join(root, 'elsewhere', 'folder'), path.join(reports, 'folder'));
    const absolute = path.join(root, 'elsewhere', 'id_ed25519');
    const xml = path.join(reports, 'junit.xml');
    fs.writeFileSync(xml, naming(['../config', absolute, 'link.txt', 'folder/token.txt', 'inside.txt']));

    const result = await upload([xml, '--environment', 'unit', '--run-key', 'names-outside', '--json']);
    expect(result.code, result.stderr).toBe(1);
    const warnings = result.stderr.split('\n').filter((line) => line.startsWith('proctor: warning: skipped '));
    expect(warnings).toHaveLength(4);
    for (const named of ['../config', absolute, 'link.txt', 'folder/token.txt']) {
      expect(
        warnings.some((line) => line.startsWith(`proctor: warning: skipped ${named}`) && line.includes('named in junit.xml')),
        named,
      ).toBe(true);
    }
    expect(result.stderr).toContain('1 attachment(s) uploaded');
    const runId = json(result.stdout).test_run.id;
    expect(await attachedTo(runId)).toEqual([{ name: 'inside', sha256: inside }]);
    expect(await blobsOf(Object.values(secrets))).toBe(0);
  });

  it('when a file lies under an --attachments-root, or the XML is reached through a symbolic link, then it is sent; the rest stays skipped', async () => {
    const root = fs.mkdtempSync(path.join(dir, 'roots-'));
    const trace = planted(path.join(root, 'test-results', 'cart', 'trace.zip'));
    const other = planted(path.join(root, 'other', 'notes.txt'));
    const beside = planted(path.join(root, 'reports', 'shot.png'));
    fs.symlinkSync(path.join(root, 'reports'), path.join(root, 'alias'));
    const xml = path.join(root, 'alias', 'junit.xml');
    fs.writeFileSync(xml, naming(['../test-results/cart/trace.zip', '../other/notes.txt', 'shot.png']));
    const rootsAlias = path.join(root, 'results-alias');
    fs.symlinkSync(path.join(root, 'test-results'), rootsAlias);

    const result = await upload([xml, '--environment', 'unit', '--run-key', 'names-root', '--attachments-root', rootsAlias, '--json']);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('proctor: warning: skipped ../other/notes.txt');
    expect(result.stderr).not.toContain('trace.zip');
    const runId = json(result.stdout).test_run.id;
    expect(await attachedTo(runId)).toEqual([
      { name: 'screenshot', sha256: beside },
      { name: 'trace', sha256: trace },
    ]);
    expect(await blobsOf([other])).toBe(0);
  });

  it('when an --attachments-root is not a folder, then the command is refused before anything is sent', async () => {
    const before = await server.sql`select count(*)::int as runs from test_runs`;
    const result = await upload([write('s.xml', SEARCH), '--environment', 'unit', '--attachments-root', path.join(dir, 'nowhere')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`--attachments-root ${path.join(dir, 'nowhere')} is not a folder`);
    expect(await server.sql`select count(*)::int as runs from test_runs`).toEqual(before);
  });
});
