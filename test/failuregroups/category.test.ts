import { describe, expect, it } from 'vitest';
import corpus from '../fixtures/category-corpus.json' with { type: 'json' };
import { FAILURE_CATEGORIES, type FailedStep, failureCategory } from '../../server/src/failuregroups/category.ts';

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
  it('when the corpus is read, then it holds at least 150 failures, each labelled with a category, every category among them', () => {
    expect(failures.length).toBeGreaterThanOrEqual(150);
    for (const failure of failures) expect(FAILURE_CATEGORIES).toContain(failure.label);
    expect(new Set(failures.map((failure) => failure.label))).toEqual(new Set(FAILURE_CATEGORIES));
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
});
