import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multipartBody } from '../helpers/bodies.ts';
import { client } from '../helpers/http.ts';
import { seedEnvironment, seedProject, startTestServer, type TestServer } from '../helpers/server.ts';
import type { JunitUploadAnswer } from '../../server/src/junit/schema.ts';

// One test written more than once, as four runners write it: TestNG's data-provider invocations
// (through Surefire), Jest's `test.each` cases of one title, Gradle's test-retry plugin, and
// pytest-rerunfailures. Repeats are retries only where the format marks them so (docs/ci.md).

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

/** A file as the upload's answer tells it. */
type FileAnswer = JunitUploadAnswer['files'][number];

/** The file uploaded as a run of its own: the answer's file, and the run's tests by title (status and retries). */
async function upload(name: string, xml: string): Promise<{ file: FileAnswer; tests: Record<string, { status: string; retries: number }> }> {
  const { body, contentType } = multipartBody([{ name, content: xml }]);
  const response = await fetch(`${server.url}/api/test-runs/junit?environment=unit`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
    body: new Uint8Array(body),
  });
  const answer = (await response.json()) as { data: { test_run: { id: number }; files: FileAnswer[] } };
  expect(response.status).toBe(200);
  const details = (await api.get(`/api/test-runs/${answer.data.test_run.id}`)).body.data.test_run.flattenedSummaryDetails as {
    title: string;
    status: string;
    retries: number;
  }[];
  return { file: answer.data.files[0] as FileAnswer, tests: Object.fromEntries(details.map((t) => [t.title, { status: t.status, retries: t.retries }])) };
}

// Surefire's report of a TestNG class whose data provider gives three rows: one testcase an invocation.
const TESTNG = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="https://maven.apache.org/surefire/maven-surefire-plugin/xsd/surefire-test-report-3.0.xsd" version="3.0" name="com.acme.PriceTest" time="0.031" tests="4" errors="0" skipped="1" failures="1">
  <properties><property name="surefire.test.class.path" value="/build/classes"/></properties>
  <testcase name="computesPrice" classname="com.acme.PriceTest" time="0.011">
    <failure message="expected [12] but found [13]" type="java.lang.AssertionError">java.lang.AssertionError: expected [12] but found [13]
	at org.testng.Assert.fail(Assert.java:110)
	at com.acme.PriceTest.computesPrice(PriceTest.java:31)</failure>
  </testcase>
  <testcase name="computesPrice" classname="com.acme.PriceTest" time="0.004"/>
  <testcase name="computesPrice" classname="com.acme.PriceTest" time="0">
    <skipped message="depends on a skipped row"/>
  </testcase>
  <testcase name="roundsDown" classname="com.acme.PriceTest" time="0.016"/>
</testsuite>`;

// jest-junit with its defaults: \`test.each\` gives three tests the title "adds an item".
const JEST = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="jest tests" tests="3" failures="1" errors="0" time="1.2">
  <testsuite name="cart" errors="0" failures="1" skipped="0" timestamp="2026-11-28T06:00:00" time="1.1" tests="3">
    <testcase classname="cart adds an item" name="cart adds an item" time="0.01">
      <failure>Error: expect(received).toBe(expected) // Object.is equality

Expected: 2
Received: 1
    at Object.toBe (/home/ci/shop/src/cart.test.ts:9:22)</failure>
    </testcase>
    <testcase classname="cart adds an item" name="cart adds an item" time="0.01"/>
    <testcase classname="cart adds an item" name="cart adds an item" time="0.01"/>
  </testsuite>
</testsuites>`;

// Gradle with the test-retry plugin: a flaky test's runs, one testcase each, the last a pass.
const GRADLE = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="com.acme.CheckoutTest" tests="4" skipped="0" failures="2" errors="0" timestamp="2026-11-28T06:00:00" hostname="ci" time="2.4">
  <properties/>
  <testcase name="paysByCard()" classname="com.acme.CheckoutTest" time="0.8">
    <failure message="java.net.SocketTimeoutException: Read timed out" type="java.net.SocketTimeoutException">java.net.SocketTimeoutException: Read timed out
	at com.acme.CheckoutTest.paysByCard(CheckoutTest.java:27)</failure>
  </testcase>
  <testcase name="paysByCard()" classname="com.acme.CheckoutTest" time="0.7">
    <failure message="java.net.SocketTimeoutException: Read timed out" type="java.net.SocketTimeoutException">java.net.SocketTimeoutException: Read timed out
	at com.acme.CheckoutTest.paysByCard(CheckoutTest.java:27)</failure>
  </testcase>
  <testcase name="paysByCard()" classname="com.acme.CheckoutTest" time="0.6"/>
  <testcase name="totals()" classname="com.acme.CheckoutTest" time="0.3"/>
  <system-out><![CDATA[]]></system-out>
  <system-err><![CDATA[]]></system-err>
</testsuite>`;

// pytest with pytest-rerunfailures (16.6.1 and later): one testcase a run, the reruns empty.
const PYTEST = `<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="6" time="3.1" timestamp="2026-11-28T06:00:00.000000+00:00" hostname="ci">
<testcase classname="tests.test_cart" name="test_flaky" time="0.2"/>
<testcase classname="tests.test_cart" name="test_flaky" time="0.2"/>
<testcase classname="tests.test_cart" name="test_always_fails" time="0.1"/>
<testcase classname="tests.test_cart" name="test_always_fails" time="0.1"/>
<testcase classname="tests.test_cart" name="test_always_fails" time="0.1"><failure message="assert False">tests/test_cart.py:12: in test_always_fails
    assert False
E   assert False</failure></testcase>
<testcase classname="tests.test_cart" name="test_total" time="0.3"/>
</testsuite></testsuites>`;

describe('a test written more than once', () => {
  it("when TestNG's invocations of one method are uploaded, then each is a test of its own (`[2]`, `[3]`), the counts the file's", async () => {
    const { file, tests } = await upload('TEST-com.acme.PriceTest.xml', TESTNG);
    expect(file).toMatchObject({
      testcases: 4,
      tests: 4,
      failures: 1,
      errors: 0,
      skipped: 1,
      totals: { tests: 4, failures: 1, errors: 0, skipped: 1 },
      differences: [],
    });
    expect(tests).toEqual({
      computesPrice: { status: 'failed', retries: 0 },
      'computesPrice [2]': { status: 'passed', retries: 0 },
      'computesPrice [3]': { status: 'skipped', retries: 0 },
      roundsDown: { status: 'passed', retries: 0 },
    });
  });

  it("when Jest's `test.each` cases of one title are uploaded, then each is a test, a failure then passes not read as a retry", async () => {
    const { file, tests } = await upload('junit.xml', JEST);
    expect(file).toMatchObject({ testcases: 3, tests: 3, failures: 1, skipped: 0, totals: { tests: 3, failures: 1, errors: 0, skipped: 0 }, differences: [] });
    expect(tests).toEqual({
      'cart adds an item': { status: 'failed', retries: 0 },
      'cart adds an item [2]': { status: 'passed', retries: 0 },
      'cart adds an item [3]': { status: 'passed', retries: 0 },
    });
  });

  it("when Gradle's test-retry runs are uploaded, then failed runs ending in a pass are one flaky test, and the answer says why the file's totals differ", async () => {
    const { file, tests } = await upload('TEST-com.acme.CheckoutTest.xml', GRADLE);
    expect(file).toMatchObject({ testcases: 4, tests: 2, failures: 0, errors: 0, skipped: 0, totals: { tests: 4, failures: 2, errors: 0, skipped: 0 } });
    expect(file.differences).toEqual([
      expect.stringContaining("2 testcase(s) read as retries of the test before them: a test's runs as Gradle's test-retry plugin writes them"),
    ]);
    expect(tests).toEqual({ 'paysByCard()': { status: 'flaky', retries: 2 }, 'totals()': { status: 'passed', retries: 0 } });
  });

  it("when pytest-rerunfailures' runs are uploaded, then a test's records are its runs: the empty reruns failed ones, the last the outcome", async () => {
    const { file, tests } = await upload('junit.xml', PYTEST);
    expect(file).toMatchObject({ testcases: 6, tests: 3, failures: 1, errors: 0, skipped: 0, totals: { tests: 6, failures: 1, errors: 0, skipped: 0 } });
    expect(file.differences).toEqual([
      expect.stringContaining("3 testcase(s) read as retries of the test before them: a test's runs as pytest-rerunfailures writes them"),
    ]);
    expect(tests).toEqual({
      test_flaky: { status: 'flaky', retries: 1 },
      test_always_fails: { status: 'failed', retries: 2 },
      test_total: { status: 'passed', retries: 0 },
    });
  });
});
