import { describe, expect, it } from 'vitest';
import { attemptsOf, errorText, fileOf, junitTestId, listedTest, ownLocation, retryRule } from '../../server/src/junit/attempts.ts';
import { type JunitCase, JunitFileError, JunitReader } from '../../server/src/junit/read.ts';

/** Every testcase of a document, read in chunks of `chunk` characters (a stream cuts anywhere). */
function read(xml: string, chunk = 7): JunitCase[] {
  const cases: JunitCase[] = [];
  const reader = new JunitReader('results.xml', (testcase) => cases.push(testcase));
  for (let at = 0; at < xml.length; at += chunk) reader.write(xml.slice(at, at + chunk));
  reader.end();
  return cases;
}

const SUREFIRE = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="com.acme.CartTest" tests="3" failures="1" errors="0" skipped="1" timestamp="2026-11-26T08:00:00Z">
  <testcase name="addsItem" classname="com.acme.CartTest" time="0.012"/>
  <testcase name="removesItem" classname="com.acme.CartTest" time="0.5">
    <failure message="expected: &lt;1&gt; but was: &lt;2&gt;" type="org.opentest4j.AssertionFailedError"><![CDATA[org.opentest4j.AssertionFailedError: expected: <1> but was: <2>
	at com.acme.CartTest.removesItem(CartTest.java:42)]]></failure>
    <rerunFailure message="expected: &lt;1&gt; but was: &lt;3&gt;" type="org.opentest4j.AssertionFailedError" time="0.4">
      <stackTrace>org.opentest4j.AssertionFailedError: expected: &lt;1&gt; but was: &lt;3&gt;
	at com.acme.CartTest.removesItem(CartTest.java:42)</stackTrace>
      <system-out>retry output</system-out>
    </rerunFailure>
    <system-out>first output</system-out>
  </testcase>
  <testcase name="checksOut" classname="com.acme.CartTest" time="0.3">
    <flakyFailure message="Timeout after 100ms" type="java.util.concurrent.TimeoutException" time="0.1"><stackTrace>java.util.concurrent.TimeoutException</stackTrace></flakyFailure>
  </testcase>
  <testcase name="pays" classname="com.acme.CartTest"><skipped message="payments are off"/></testcase>
</testsuite>`;

describe('reading JUnit XML', () => {
  it("when Surefire's file is read in small chunks, then each testcase comes whole, with its failure, retries, output and skip", () => {
    const [added, removed, checkedOut, paid] = read(SUREFIRE);
    expect(added).toMatchObject({ name: 'addsItem', classname: 'com.acme.CartTest', suites: ['com.acme.CartTest'], time: 0.012, failure: null, skipped: null });
    expect(removed?.failure).toMatchObject({ element: 'failure', message: 'expected: <1> but was: <2>', type: 'org.opentest4j.AssertionFailedError' });
    expect(removed?.failure?.text).toContain('at com.acme.CartTest.removesItem(CartTest.java:42)');
    expect(removed?.retries).toEqual([expect.objectContaining({ element: 'rerunFailure', message: 'expected: <1> but was: <3>', time: 0.4 })]);
    expect(removed?.retries[0]?.text).not.toContain('retry output');
    expect(removed?.systemOut).toBe('first output');
    expect(checkedOut?.retries).toEqual([expect.objectContaining({ element: 'flakyFailure', type: 'java.util.concurrent.TimeoutException' })]);
    expect(paid?.skipped).toEqual({ message: 'payments are off' });
    expect(removed?.timestamp).toBe('2026-11-26T08:00:00Z');
  });

  it('when testcases rerun, are flaky, pass or are skipped, then their attempts carry the outcome a Playwright test would', () => {
    const [added, removed, checkedOut, paid] = read(SUREFIRE) as JunitCase[];
    expect(attemptsOf([added as JunitCase])).toEqual([
      expect.objectContaining({ retry: 0, status: 'passed', duration: 12, final: expect.objectContaining({ outcome: 'expected' }) }),
    ]);
    const removedAttempts = attemptsOf([removed as JunitCase]);
    expect(removedAttempts.map((a) => [a.retry, a.status, a.final?.outcome ?? null])).toEqual([
      [0, 'failed', null],
      [1, 'failed', 'unexpected'],
    ]);
    expect(removedAttempts[1]?.final?.failure_group_id).toMatch(/^fg_[0-9a-f]{20}$/);
    expect(removedAttempts[1]?.final?.stack_frames).toEqual(['com.acme.CartTest.removesItem(CartTest.java:42)']);
    expect(removedAttempts[0]?.stdout_tail).toBe('first output');
    expect(attemptsOf([checkedOut as JunitCase]).map((a) => [a.status, a.final?.outcome ?? null])).toEqual([
      ['timedOut', null],
      ['passed', 'flaky'],
    ]);
    expect(attemptsOf([paid as JunitCase])[0]?.final).toMatchObject({ outcome: 'skipped', skip_reason: 'payments are off' });
    expect(attemptsOf([removed as JunitCase])[0]?.started_at).toBe('2026-11-26T08:00:00.000Z');
  });

  it('when one test is written as testcases one after another, then they are its runs in order', () => {
    const xml = `<testsuites><testsuite name="pytest">
      <testcase classname="tests.test_cart" name="test_total" time="0.1"><failure message="assert 3 == 4">tests/test_cart.py:12: in test_total
    assert 3 == 4</failure></testcase>
      <testcase classname="tests.test_cart" name="test_total" time="0.2"/>
    </testsuite></testsuites>`;
    const cases = read(xml);
    expect(junitTestId(cases[0] as JunitCase)).toBe(junitTestId(cases[1] as JunitCase));
    const attempts = attemptsOf(cases);
    expect(attempts.map((a) => [a.retry, a.status, a.final?.outcome ?? null])).toEqual([
      [0, 'failed', null],
      [1, 'passed', 'flaky'],
    ]);
    expect(attempts[1]?.final?.error_message).toContain('assert 3 == 4');
    expect(attempts[1]?.final?.stack_frames).toEqual(['tests/test_cart.py:12: in test_total']);
  });

  it('when the same test is read in two uploads, then its id is the same, shaped as a runner test id', () => {
    const xml = '<testsuite name="s"><testcase classname="a.B" name="c" file="src/b.test.ts"/></testsuite>';
    const [first] = read(xml);
    const [again] = read(xml, 3);
    expect(junitTestId(first as JunitCase)).toMatch(/^[0-9a-f]{20}-[0-9a-f]{20}$/);
    expect(junitTestId(first as JunitCase)).toBe(junitTestId(again as JunitCase));
    expect(listedTest(first as JunitCase)).toMatchObject({ title: 'c', file_path: 'src/b.test.ts', suites: ['s', 'a.B'], runner_project: '' });
  });

  it('when an error has a type, a message and a stack, then its text reads type, message, stack once each', () => {
    expect(
      errorText({
        element: 'failure',
        type: 'AssertionError',
        message: 'expected 1 to be 2',
        text: 'AssertionError: expected 1 to be 2\n    at t.test.ts:3:5',
        time: null,
      }),
    ).toBe('AssertionError: expected 1 to be 2\n    at t.test.ts:3:5');
    expect(errorText({ element: 'failure', type: 'FAILURE', message: 'home.spec.ts:19:7 greets', text: 'Error: boom', time: null })).toBe(
      'home.spec.ts:19:7 greets\n\nError: boom',
    );
  });

  it('when a testcase has no name, or a runner wrote a control character XML forbids, then it is read: named by its class, the character as U+FFFD', () => {
    const [named, unnamed] = read('<testsuite>\n<testcase classname="x.Y"/><testcase/></testsuite>');
    expect([named?.name, unnamed?.name]).toEqual(['x.Y', '(unnamed testcase)']);
    const [coloured] = read('<testsuite><testcase name="t"><failure message="\u001b[31mred\u001b[0m">boom</failure></testcase></testsuite>');
    expect(coloured?.failure?.message).toBe('\uFFFD[31mred\uFFFD[0m');
  });

  it("when a file states totals, then they are summed over its outermost testsuites that state them (Google Test's disabled as skipped)", () => {
    const reader = new JunitReader('results.xml', () => undefined);
    reader.write(`<testsuites tests="99"><testsuite tests="3" failures="1" skipped="1"><testsuite tests="3"/></testsuite>
      <testsuite tests="2" errors="1" disabled="1"><testcase name="off" status="disabled"/></testsuite></testsuites>`);
    reader.end();
    expect(reader.totals).toEqual({ tests: 5, failures: 1, errors: 1, skipped: 2 });
  });

  it.each([
    ['<testsuite name="s"><testcase name="a">', 'results.xml:1: is not well-formed XML'],
    ['<html><body/></html>', 'results.xml:1: is not JUnit XML: its root element is <html>'],
    ['', 'results.xml:1: holds no element'],
    ['<?xml version="1.0"?>\n', 'results.xml:2: holds no element'],
    ['<testsuite>\n<testcase name="a"></testsuite>', 'results.xml:2: is not well-formed XML'],
  ])('when the file is %j, then it is refused naming the file and line: %s', (xml, message) => {
    expect(() => read(xml)).toThrow(JunitFileError);
    expect(() => read(xml)).toThrow(message);
  });

  it.each([
    ['<testsuite name="pytest"><testcase classname="tests.test_cart" name="t"/></testsuite>', 'tests/test_cart.py'],
    ['<testsuite name="x"><testcase classname="tests.test_cart.TestTotals" name="t"/></testsuite>', 'tests/test_cart.py'],
    ['<testsuite name="x"><testcase classname="com.acme.CartTest" name="t"/></testsuite>', 'com.acme.CartTest'],
    ['<testsuite name="x"><testcase classname="a.b" file="src/a.test.ts" name="t"/></testsuite>', 'src/a.test.ts'],
  ])("when a testcase is %s, then its test's file is %s", (xml, file) => {
    const [testcase] = read(xml);
    expect(fileOf(testcase as JunitCase)).toBe(file);
    expect(listedTest(testcase as JunitCase).file_path).toBe(file);
  });

  it.each([
    ['java.lang.AssertionError: x\n\tat org.junit.Assert.fail(Assert.java:89)\n\tat com.acme.CartTest.adds(CartTest.java:42)', 'CartTest.java:42'],
    ['E   assert 1 == 2\n/usr/lib/python3/site-packages/_pytest/python.py:159: in call\ntests/test_cart.py:12: AssertionError', 'tests/test_cart.py:12'],
    [
      'Error: boom\n    at Object.toBe (/ci/node_modules/expect/build/index.js:3:1)\n    at Object.<anonymous> (/ci/src/cart.test.ts:9:22)',
      '/ci/src/cart.test.ts:9:22',
    ],
    [
      'Assert.Equal() Failure\n   at Xunit.Assert.Equal[T](T expected, T actual)\n   at SampleProject.xUnit.TestServiceTests.FailTest() in C:\\Dev\\LiquidTestReports\\test\\SampleProject\\SampleProject.Tests.xUnit\\TestServiceTests.cs:line 65',
      'TestServiceTests.cs:65',
    ],
    ['=== RUN   TestSum\n    calculator_test.go:19: expected 1+1 = 3, got 2\n--- FAIL: TestSum (0.00s)', 'calculator_test.go:19'],
    [
      'panic: boom\n\ngoroutine 7 [running]:\nruntime/debug.Stack()\n\t/usr/local/go/src/runtime/debug/stack.go:24 +0x5e\n\t/src/cart/cart.go:42 +0x1d',
      '/src/cart/cart.go:42',
    ],
    [
      "expected: 3\n     got: 2\n# /usr/lib/ruby/gems/3.2.0/gems/rspec-support-3.12.0/lib/rspec/support.rb:102:in `block'\n# ./spec/config/check_env_vars_spec.rb:7:in `block (3 levels) in <top (required)>'",
      'spec/config/check_env_vars_spec.rb:7',
    ],
    ['Exception: Some error\npackage:test_api  expect\ndart:async  _Zone.run\ntest/main.dart 2:3  throwError', 'test/main.dart:2:3'],
    ['no stack at all', null],
  ])("when a failure's text is %j, then where it failed in the project's own files is %s", (text, location) => {
    expect(ownLocation(text)).toBe(location);
  });

  it('when one test is written several times in a row, then a rule reads them as its runs or they are tests of their own', () => {
    const gradle = read(`<testsuite name="a.B"><testcase classname="a.B" name="t"><failure/></testcase><testcase classname="a.B" name="t"/></testsuite>`);
    expect(retryRule(gradle)).toBe('gradle-test-retry');
    const surefire = read(
      `<testsuite name="a.B" xsi:noNamespaceSchemaLocation="https://maven.apache.org/surefire/x.xsd" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><testcase classname="a.B" name="t"><failure/></testcase><testcase classname="a.B" name="t"/></testsuite>`,
    );
    expect(retryRule(surefire)).toBeNull();
    const stillFailing = read(
      `<testsuite name="a.B"><testcase classname="a.B" name="t"><failure/></testcase><testcase classname="a.B" name="t"><failure/></testcase></testsuite>`,
    );
    expect(retryRule(stillFailing)).toBeNull();
    const pytest = read(`<testsuite name="pytest"><testcase classname="m" name="t"/><testcase classname="m" name="t"/></testsuite>`);
    expect(retryRule(pytest)).toBe('pytest-rerunfailures');
    const marked = read(
      `<testsuite name="s"><testcase classname="m" name="t"><properties><property name="rerun" value="1"/></properties></testcase><testcase classname="m" name="t"/></testsuite>`,
    );
    expect(retryRule(marked)).toBe('pytest-rerunfailures');
  });
});
