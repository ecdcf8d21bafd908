import { describe, expect, it } from 'vitest';
import corpus from '../fixtures/category-corpus.json' with { type: 'json' };
import { FAILURE_CATEGORIES, type FailedStep, failureCategory, UNIT_TEST_CATEGORIES } from '../../server/src/failuregroups/category.ts';

// Real Playwright failures (test/fixtures/category-corpus: a suite whose every test fails on purpose
// in a known way, its title starting with the category written by hand; record-failures.mjs kept
// each failure's message, stack and failing steps as Playwright reported them).
interface Labelled {
  name: string;
  label: string;
  message: string;
  stack: string | null;
  steps: FailedStep[];
}

const failures = corpus as Labelled[];
const decided = failures.map((failure) => ({ failure, category: failureCategory({ message: failure.message, stack: failure.stack, steps: failure.steps }) }));

describe('failure categories over real Playwright failures', () => {
  it('when the corpus is read, then it holds at least 150 failures, each labelled with a category, every Playwright category among them', () => {
    expect(failures.length).toBeGreaterThanOrEqual(150);
    for (const failure of failures) expect(FAILURE_CATEGORIES).toContain(failure.label);
    expect(new Set(failures.map((failure) => failure.label))).toEqual(
      new Set(FAILURE_CATEGORIES.filter((category) => !UNIT_TEST_CATEGORIES.includes(category))),
    );
  });

  it('when each failure is categorised, then at least 90% agree with their labels and at most 5% are unknown', () => {
    const agreeing = decided.filter(({ failure, category }) => category === failure.label).length;
    const unknown = decided.filter(({ category }) => category === 'unknown').length;
    expect(agreeing / failures.length).toBeGreaterThanOrEqual(0.9);
    expect(unknown / failures.length).toBeLessThanOrEqual(0.05);
  });

  it.each([
    ['assertion', 'Error: expect(locator).toHaveText(expected) failed\n\nLocator: locator(\'#banner\')\nExpected: "Hi"\nReceived: "Hello"'],
    ['locator', "TimeoutError: locator.click: Timeout 400ms exceeded.\nCall log:\n  - waiting for getByRole('button', { name: 'Pay' })"],
    ['locator', "Error: locator.click: Error: strict mode violation: locator('li') resolved to 2 elements:"],
    ['locator', "Error: expect(locator).toBeVisible() failed\n\nLocator: locator('.toast')\nExpected: visible\nError: element(s) not found"],
    ['timeout', 'Test timeout of 30000ms exceeded.'],
    ['navigation', 'Error: page.goto: net::ERR_CONNECTION_REFUSED at http://127.0.0.1:3000/'],
    ['navigation', 'TimeoutError: page.goto: Timeout 30000ms exceeded.\nCall log:\n  - navigating to "http://127.0.0.1:3000/", waiting until "load"'],
    ['network', 'Error: apiRequestContext.post: connect ECONNREFUSED 127.0.0.1:8080'],
    ['snapshot', 'Error: expect(locator).toHaveScreenshot(expected) failed\n\n  1250 pixels (ratio 0.02 of all image pixels) are different.'],
    ['crash', 'Error: locator.click: Target page, context or browser has been closed'],
    ['setup', 'Error: Timed out waiting 60000ms from config.webServer.'],
    ['unknown', 'Error: Order 4711 was not found in the basket'],
  ])('when a failure reads like a %s, then it is categorised so', (category, message) => {
    expect(failureCategory({ message })).toBe(category);
  });

  it("when the steps say a hook or a fixture failed, then it is setup, whatever the error's own kind", () => {
    const message = 'Error: apiRequestContext.post: connect ECONNREFUSED 127.0.0.1:8080';
    expect(
      failureCategory({
        message,
        steps: [
          { category: 'hook', title: 'Before Hooks' },
          { category: 'fixture', title: 'Fixture "loggedIn"' },
        ],
      }),
    ).toBe('setup');
    expect(
      failureCategory({
        message,
        steps: [
          { category: 'hook', title: 'Before Hooks' },
          { category: 'hook', title: 'beforeAll hook' },
        ],
      }),
    ).toBe('setup');
    expect(failureCategory({ message, steps: [{ category: 'pw:api', title: 'POST' }] })).toBe('network');
    expect(failureCategory({ message: null })).toBe('unknown');
  });

  // Unit tests' failures as runners write them in JUnit XML (the message, then the stack).
  it.each([
    ['assertion', 'org.opentest4j.AssertionFailedError: expected: <1> but was: <2>\n\tat com.acme.CartTest.removesItem(CartTest.java:42)'],
    ['assertion', 'self = <test_cart.TestCart>\n>       assert total == 4\nE       assert 3 == 4\n\ntests/test_cart.py:12: AssertionError'],
    ['assertion', 'Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 4\nReceived: 3'],
    ['assertion', 'java.lang.AssertionError: expected [true] but found [false]\n\tat org.testng.Assert.fail(Assert.java:99)'],
    ['timeout', 'org.junit.runners.model.TestTimedOutException: test timed out after 100 milliseconds'],
    ['timeout', 'thrown: "Exceeded timeout of 5000 ms for a test."'],
    ['timeout', 'Error: Timeout of 2000ms exceeded. For async tests and hooks, ensure "done()" is called'],
    ['timeout', 'Failed: Timeout >1.0s'],
    ['exception', 'java.lang.NullPointerException: Cannot invoke "String.length()" because "name" is null\n\tat com.acme.Cart.total(Cart.java:12)'],
    ['exception', "tests/test_cart.py:20: in test_load\n    cart['id']\nE   KeyError: 'id'"],
    ['exception', "TypeError: Cannot read properties of undefined (reading 'id')\n    at Object.<anonymous> (src/cart.test.ts:8:5)"],
    ['setup', 'failed on setup with "fixture \'database\' not found"'],
    ['setup', 'Error: "before all" hook for "adds an item": connect ECONNREFUSED'],
    ['setup', 'org.junit.jupiter.api.extension.ParameterResolutionException: No ParameterResolver registered'],
    ['crash', 'The forked VM terminated without properly saying goodbye. VM crash or System.exit called?'],
    ['crash', 'Fatal Python error: Segmentation fault'],
    ['crash', 'java.lang.OutOfMemoryError: Java heap space'],
  ])("when a unit test's failure reads like %s, then it is categorised so", (category, message) => {
    expect(failureCategory({ message })).toBe(category);
  });
});
