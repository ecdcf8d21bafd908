import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multipartBody } from '../helpers/bodies.ts';
import { client } from '../helpers/http.ts';
import { planted } from '../helpers/planted.ts';
import { proctorCi } from '../helpers/process.ts';
import { seedEnvironment, seedProject, startTestServer, type TestServer } from '../helpers/server.ts';
import { GuidMap } from '../../server/src/junit/formats/guid-map.ts';
import type { JunitUploadAnswer } from '../../server/src/junit/schema.ts';

// The XML formats beyond JUnit (TRX, NUnit, xUnit.net), each read from a real runner's file into
// the same tests and attempts as JUnit: failures with their message and stack, skip reasons,
// durations, the files a test names; and the format detected from the content, or forced.

const CORPUS = path.join(import.meta.dirname, '../fixtures/junit-corpus/enricomi');
const ATTACHING = path.join(import.meta.dirname, '../fixtures/formats-xml');

let server: TestServer;
let key: string;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProject(server.sql);
  key = project.key;
  api = client(server.url, key);
  await seedEnvironment(server.sql, project.projectId, 'unit');
});
afterAll(async () => {
  await server?.close();
});

let runs = 0;

/** Uploads files as they are on disk, through POST /api/test-runs/junit; `format` forces one. */
async function upload(files: string[], format?: string): Promise<{ status: number; data?: JunitUploadAnswer; error?: string }> {
  const { body, contentType } = multipartBody(files.map((file) => ({ name: path.basename(file), content: fs.readFileSync(file, 'utf8') })));
  const query = new URLSearchParams({ environment: 'unit', run_key: `formats-${++runs}`, ...(format ? { format } : {}) });
  const response = await fetch(`${server.url}/api/test-runs/junit?${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
    body: new Uint8Array(body),
  });
  const answer = (await response.json()) as { data?: JunitUploadAnswer; error?: { message: string } };
  return { status: response.status, data: answer.data, error: answer.error?.message };
}

interface Stored {
  title: string;
  file_path: string;
  status: string;
  duration: number;
  error_message: string | null;
  skip_reason: string | null;
}

/** The run's tests as its page shows them, by title; and each final attempt's stack and output as stored. */
async function storedTests(runId: number): Promise<Record<string, Stored & { stack_frames: string[] | null; stdout_tail: string | null }>> {
  const run = (await api.get(`/api/test-runs/${runId}`)).body.data.test_run;
  const rows = await server.sql<{ test_case_id: string; stack_frames: string[] | null; stdout_tail: string | null }[]>`
    select test_case_id, stack_frames, stdout_tail from test_results where test_run_id = ${runId} and is_final`;
  const byId = new Map(rows.map((row) => [row.test_case_id, row]));
  return Object.fromEntries(
    (run.flattenedSummaryDetails as (Stored & { test_case_id: string })[]).map((test) => [
      test.title,
      { ...test, stack_frames: byId.get(test.test_case_id)?.stack_frames ?? null, stdout_tail: byId.get(test.test_case_id)?.stdout_tail ?? null },
    ]),
  );
}

describe('TRX', () => {
  it('when a dotnet test TRX file (results before their definitions) is uploaded, then its failures, skips and durations are stored under their classes', async () => {
    const { status, data, error } = await upload([path.join(CORPUS, 'trx/xunit/dotnet-trx.trx')]);
    expect(status, error).toBe(200);
    expect(data?.files[0]).toMatchObject({ format: 'trx', testcases: 11, tests: 11, failures: 5, skipped: 1, differences: [] });
    const tests = await storedTests(data?.test_run.id as number);
    const failed = tests['Exception_In_TargetTest'] as Stored & { stack_frames: string[] | null };
    expect(failed).toMatchObject({ status: 'failed', file_path: 'DotnetTests.XUnitTests.CalculatorTests' });
    expect(failed.error_message).toContain('System.DivideByZeroException : Attempted to divide by zero.');
    expect(failed.stack_frames?.[0]).toMatch(/^DotnetTests\.Unit\.Calculator\.Div\(Int32 a, Int32 b\) in .*Calculator\.cs:line 9$/);
    // A theory's case named by its display name: its class from the definition read on the file's second pass.
    expect(tests['Should be even number(i: 3)']).toMatchObject({ status: 'failed', file_path: 'DotnetTests.XUnitTests.CalculatorTests' });
    expect(tests['Skipped_Test']).toMatchObject({ status: 'skipped', skip_reason: 'Skipped test' });
    expect(tests['Timeout_Test']).toMatchObject({ status: 'passed', duration: 108 });
  });

  it("when a vstest TRX file names its results' files, then the answer names each on its test, under the result's folder", async () => {
    const file = path.join(ATTACHING, 'actions-runner/ReadsResultsReturnsCorrectValues.trx');
    const { status, data, error } = await upload([file]);
    expect(status, error).toBe(200);
    expect(data?.files[0]).toMatchObject({ format: 'trx', testcases: 2, tests: 2, failures: 1, differences: [] });
    const tests = await storedTests(data?.test_run.id as number);
    expect(tests['TestMethod2']).toMatchObject({ status: 'failed', error_message: expect.stringContaining('Assert.Fail failed.'), duration: 83 });
    expect(tests['TestMethod2']?.stdout_tail).toBe('Show console log output.');
    expect(data?.attachments.map(({ file: named, path: at, retry }) => ({ named, at, retry })).sort((a, b) => a.at.localeCompare(b.at))).toEqual([
      { named: path.basename(file), at: '48ec1e47-b9df-43b9-aef2-a2cc8742353d/DIGANR-DEV4/x.txt', retry: 0 },
      { named: path.basename(file), at: 'eb421c16-4546-435a-9c24-0d2878ea76d4/PSD_Startseite.webtestResult', retry: 0 },
    ]);
  });
});

describe('TRX: test ids kept between the passes', () => {
  it('when ids are GUIDs that share words, or no GUIDs at all, then each finds its own definition, and an unknown id none', () => {
    const map = new GuidMap();
    const guid = (i: number) => `${i.toString(16).padStart(8, '0')}-AAAA-bbbb-cccc-${i.toString(16).padStart(12, '0')}`;
    for (let i = 0; i < 20_000; i++) map.set(guid(i), i % 7);
    map.set('asdf', 99);
    map.set(guid(5), 42);
    expect(map.get(guid(5))).toBe(42);
    expect(map.get(guid(5).toLowerCase())).toBe(42);
    expect(Array.from({ length: 20_000 }, (_, i) => map.get(guid(i))).filter((value, i) => i !== 5 && value !== i % 7)).toEqual([]);
    expect(map.get('asdf')).toBe(99);
    expect(map.get(guid(20_000))).toBeUndefined();
    expect(map.get('qwer')).toBeUndefined();
  });
});

describe('NUnit', () => {
  it("when an nunit3-console result is uploaded, then its failure's message, stack and output, its skip's reason, its durations and its attachments are stored", async () => {
    const file = path.join(ATTACHING, 'azure-pipelines-agent/nUnit3ResultsXmlWithAttachments.xml');
    const { status, data, error } = await upload([file]);
    expect(status, error).toBe(200);
    // The inconclusive test gave no verdict: skipped, as the run's totals count it (`inconclusive` with `skipped`).
    expect(data?.files[0]).toMatchObject({ format: 'nunit', testcases: 5, tests: 5, failures: 1, skipped: 2, differences: [] });
    const tests = await storedTests(data?.test_run.id as number);
    const failed = tests['SomeFailingTest'] as Stored & { stack_frames: string[] | null; stdout_tail: string | null };
    expect(failed).toMatchObject({ status: 'failed', file_path: 'ExpectedExceptionExample.ExpectedExceptionTests', duration: 4 });
    expect(failed.error_message).toContain('System.ArgumentException : Value does not fall within the expected range.');
    expect(failed.stack_frames).toEqual(['ExpectedExceptionExample.ExpectedExceptionTests.SomeFailingTest()']);
    expect(failed.stdout_tail).toBe('This is standard console output.');
    expect(tests['SomeIgnoredTest']).toMatchObject({ status: 'skipped', skip_reason: 'Some reason' });
    expect(tests['HandlesArgumentExceptionAsType']).toMatchObject({ status: 'passed', duration: 2 });
    // The test's own attachments; the suites' (dummy2, dummy3) are no test's.
    expect(data?.attachments.map((named) => named.path)).toEqual(['C:\\Users\\navb\\Pictures\\dummy1.png', 'C:\\Users\\navb\\Pictures\\dummy4.png']);
  });

  it('when an NUnit 2 result is uploaded, then its failures and errors are told apart, and its ignored tests skipped with their reason', async () => {
    const { status, data, error } = await upload([path.join(CORPUS, 'nunit/nunit3/jenkins/NUnit-correct.xml')]);
    expect(status, error).toBe(200);
    expect(data?.files[0]).toMatchObject({ format: 'nunit', tests: 28, failures: 1, errors: 1, skipped: 8 });
    const stored = Object.values(await storedTests(data?.test_run.id as number));
    const failed = stored.filter((test) => test.status === 'failed');
    expect(failed).toHaveLength(2);
    for (const test of failed) expect(test.error_message).toBeTruthy();
    expect(stored.filter((test) => test.status === 'skipped').every((test) => test.skip_reason)).toBe(true);
  });
});

describe('xUnit.net', () => {
  it("when an xUnit.net v2 file is uploaded, then its failures' messages and stacks, its skip's reason and its durations are stored under the test's class", async () => {
    const { status, data, error } = await upload([path.join(CORPUS, 'xunit/mstest/fixie.xml')]);
    expect(status, error).toBe(200);
    expect(data?.files[0]).toMatchObject({ format: 'xunit', testcases: 7, tests: 7, failures: 3, skipped: 1, differences: [] });
    const tests = await storedTests(data?.test_run.id as number);
    const failed = tests['FailByAssertion'] as Stored & { stack_frames: string[] | null };
    expect(failed).toMatchObject({ status: 'failed', file_path: '[testClass]', duration: 1234 });
    expect(failed.error_message).toContain('Fixie.Tests.Assertions.AssertException: Expected: 2');
    expect(failed.stack_frames).toEqual(['[testClassForStackTrace].FailByAssertion() in [fileLocation]:line #']);
    expect(tests['Skip']).toMatchObject({ status: 'skipped', skip_reason: '⚠ Skipped with attribute.' });
    // xUnit.net's XML names no files of a test: nothing to send.
    expect(data?.attachments).toEqual([]);
  });
});

describe('the format of a file', () => {
  it('when `proctor-ci upload FILE` sends a TRX file without --format, then the server detects it and reads it', async () => {
    const result = await proctorCi(
      ['upload', path.join(CORPUS, 'trx/nunit/NUnit-net461-sample.trx'), '--environment', 'unit', '--run-key', 'formats-cli', '--json'],
      { url: server.url, key },
      {},
    );
    expect(result.code, result.stderr).toBe(1);
    const answer = JSON.parse(result.stdout);
    expect(answer.files).toMatchObject([{ name: 'NUnit-net461-sample.trx', format: 'trx', tests: 6, failures: 3, skipped: 1 }]);
    expect(answer.counts).toMatchObject({ tests: 6, failed: 3, skipped: 1 });
  });

  it('when `proctor-ci upload --format` forces a format the file is not in, then the upload is refused naming the file and its line', async () => {
    const result = await proctorCi(
      ['upload', path.join(CORPUS, 'xunit/mstest/fixie.xml'), '--environment', 'unit', '--run-key', 'formats-cli-forced', '--format', 'trx'],
      { url: server.url, key },
      {},
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/fixie\.xml:2: is not TRX: its root element is <assemblies>, where TRX has <TestRun>/);
  });

  it('when an upload forces a format the file is not in, then it is a 400 naming the file and the line of its root', async () => {
    const { status, error } = await upload([path.join(CORPUS, 'trx/mstest/pickles.trx')], 'nunit');
    expect(status).toBe(400);
    expect(error).toBe('pickles.trx:3: is not NUnit XML: its root element is <TestRun>, where NUnit XML has <test-run> or <test-results> or <test-suite>');
  });

  it('when a file is in no format Proctor reads, then it is a 400 naming the file, line 1, and the formats read', async () => {
    const { status, error } = await upload([path.join(CORPUS, '../README.md')]);
    expect(status).toBe(400);
    expect(error).toMatch(
      /^README\.md:1: is in no format Proctor reads: Proctor reads JUnit XML \(junit\), TRX \(trx\), NUnit XML \(nunit\), xUnit\.net XML \(xunit\)/,
    );
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-formats-'));
    const empty = path.join(dir, 'empty.xml');
    fs.writeFileSync(empty, '');
    const none = await upload([empty]);
    fs.rmSync(dir, { recursive: true, force: true });
    expect(none).toMatchObject({ status: 400, error: expect.stringMatching(/^empty\.xml:1: is empty: /) });
  });
});

/** An NUnit 3 result of one failed test whose attachments are `paths`, shaped as nunit3-console writes it; `attribute`: as xUnit.net v3's NUnit report names them. */
function nunitNaming(paths: string[], attribute = false): string {
  const attachments = paths
    .map((named) =>
      attribute ? `<attachment filePath="${named}" description="${path.basename(named)}" />` : `<attachment><filePath>${named}</filePath></attachment>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="utf-8" standalone="no"?><test-run id="2" testcasecount="1" result="Failed" total="1" passed="0" failed="1" inconclusive="0" skipped="0" asserts="0" engine-version="3.16.3.0" start-time="2026-11-26 08:00:00Z" end-time="2026-11-26 08:00:01Z" duration="1.02"><test-suite type="Assembly" id="0-1002" name="Shop.Tests.dll" fullname="/src/Shop.Tests/bin/Release/net8.0/Shop.Tests.dll" runstate="Runnable" testcasecount="1" result="Failed" site="Child" total="1" passed="0" failed="1" inconclusive="0" skipped="0" asserts="1"><test-suite type="TestFixture" id="0-1000" name="CartTests" fullname="Shop.Tests.CartTests" classname="Shop.Tests.CartTests" runstate="Runnable" testcasecount="1" result="Failed" site="Child" total="1" passed="0" failed="1" inconclusive="0" skipped="0" asserts="1"><test-case id="0-1001" name="ChecksOut" fullname="Shop.Tests.CartTests.ChecksOut" methodname="ChecksOut" classname="Shop.Tests.CartTests" runstate="Runnable" seed="1902677290" result="Failed" start-time="2026-11-26 08:00:00Z" end-time="2026-11-26 08:00:01Z" duration="0.951" asserts="1"><failure><message><![CDATA[  Expected: 2
  But was:  1
]]></message><stack-trace><![CDATA[   at Shop.Tests.CartTests.ChecksOut() in /src/Shop.Tests/CartTests.cs:line 29
]]></stack-trace></failure><attachments>${attachments}</attachments><assertions><assertion result="Failed"><message><![CDATA[  Expected: 2
  But was:  1
]]></message></assertion></assertions></test-case></test-suite></test-suite></test-run>`;
}

describe('the files a report names, sent by `proctor-ci upload`', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-named-'));
  });
  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function attachedTo(runId: number): Promise<{ name: string; sha256: string }[]> {
    return server.sql<{ name: string; sha256: string }[]>`
      select a.name, b.sha256 from test_attachments a join artifact_blobs b on b.id = a.blob_id where a.test_run_id = ${runId} order by a.name, b.sha256`;
  }

  async function sent(files: string[], runKey: string, extra: string[] = []): Promise<{ code: number | null; stderr: string; runId: number }> {
    const result = await proctorCi(['upload', ...files, '--environment', 'unit', '--run-key', runKey, '--json', ...extra], { url: server.url, key }, {});
    return { code: result.code, stderr: result.stderr, runId: JSON.parse(result.stdout).test_run.id };
  }

  it("when an NUnit 3 result names its test's files by absolute and by relative paths, then both are sent as the failed attempt's attachments", async () => {
    const root = path.join(dir, 'nunit');
    const absolute = path.join(root, 'TestResults', 'screenshots', 'checkout.png');
    const shot = planted(absolute);
    const log = planted(path.join(root, 'TestResults', 'logs', 'checkout.log'));
    const xml = path.join(root, 'TestResults', 'TestResult.xml');
    fs.writeFileSync(xml, nunitNaming([absolute, 'logs/checkout.log']));
    const result = await sent([xml], 'named-nunit');
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('2 attachment(s) uploaded');
    expect(await attachedTo(result.runId)).toEqual([
      { name: 'checkout', sha256: log },
      { name: 'screenshot', sha256: shot },
    ]);
  });

  it("when xUnit.net v3's NUnit report names its files in the system's temporary folder, then they are sent from under an --attachments-root, and skipped with a warning without one", async () => {
    const root = path.join(dir, 'xunit-v3');
    // xUnit.net v3 writes each test's attachments to <temp>/<test's unique id>/, named by the attachment and its media type.
    const temp = path.join(root, 'tmp');
    const named = path.join(temp, '5c2a0ea5d1a33e6d2a6c1f4d8c0a7c4f1e1b2a3d', 'cart-state.txt');
    const state = planted(named);
    const xml = path.join(root, 'reports', 'results.nunit.xml');
    fs.mkdirSync(path.dirname(xml), { recursive: true });
    fs.writeFileSync(xml, nunitNaming([named], true));
    const skipped = await sent([xml], 'named-xunit-v3-outside');
    expect(skipped.stderr).toContain(`proctor: warning: skipped ${named}, named in results.nunit.xml`);
    expect(await attachedTo(skipped.runId)).toEqual([]);
    const result = await sent([xml], 'named-xunit-v3', ['--attachments-root', temp]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('1 attachment(s) uploaded');
    expect(await attachedTo(result.runId)).toEqual([{ name: 'cart-state', sha256: state }]);
  });

  it("when a vstest TRX file names its results' files, then they are sent from the run's deployment folder beside it", async () => {
    const root = path.join(dir, 'trx');
    const trx = path.join(root, 'TestResults', 'ReadsResultsReturnsCorrectValues.trx');
    fs.mkdirSync(path.dirname(trx), { recursive: true });
    // As `dotnet test --logger trx` lays them out: <results>/<run deployment>/In/<result's folder>/<file>.
    const text = fs
      .readFileSync(path.join(ATTACHING, 'actions-runner/ReadsResultsReturnsCorrectValues.trx'), 'utf8')
      .replace('</Description>', '</Description><Deployment runDeploymentRoot="runner_DIGANR-DEV4 2026-11-26 08_00_00" />');
    fs.writeFileSync(trx, text);
    const deployment = path.join(root, 'TestResults', 'runner_DIGANR-DEV4 2026-11-26 08_00_00', 'In');
    const x = planted(path.join(deployment, '48ec1e47-b9df-43b9-aef2-a2cc8742353d', 'DIGANR-DEV4', 'x.txt'));
    const result = await sent([trx], 'named-trx');
    expect(result.stderr).toContain('1 attachment(s) uploaded');
    expect(await attachedTo(result.runId)).toEqual([{ name: 'x', sha256: x }]);
  });
});
