import { describe, expect, it } from 'vitest';
import corpus from '../fixtures/signature-corpus.json' with { type: 'json' };
import { failureSignature } from '../../reporter/src/text/signature.ts';
import { failureGroupTitle, TITLE_TEXT_MAX, uniqueTitle } from '../../server/src/failuregroups/title.ts';

// Titles of failure groups made from real Playwright failures (test/fixtures/signature-corpus: a
// suite that fails on purpose, its messages recorded by a reporter, colour codes and all).
interface Failure {
  name: string;
  message: string;
  file: string;
  line: number;
}

const failures = corpus as Failure[];
const titleOf = (failure: Failure) => failureGroupTitle({ message: failure.message, location: `${failure.file}:${failure.line}:9`, testTitle: null });
const named = (name: string) => {
  const failure = failures.find((candidate) => candidate.name === name);
  if (!failure) throw new Error(`no failure named ${name} in the corpus`);
  return titleOf(failure);
};

describe('failure group titles', () => {
  it('when a failure is of each kind, then its title says what failed, on what, and where, as a person would', () => {
    expect(named('text banner Bonjour')).toBe("expect(locator('#banner')).toHaveText at failures.spec.ts:26");
    expect(named('toBe numbers 2')).toBe('expect(received).toBe at failures.spec.ts:98');
    expect(named('url /orders/17')).toBe('expect(page).toHaveURL at failures.spec.ts:111');
    expect(named('click buy 400')).toBe("locator.click on locator('#buy') timed out at failures.spec.ts:47");
    expect(named('click missing role 400')).toBe("locator.click on getByRole('button', { name: 'Checkout' }) timed out at failures.spec.ts:54");
    expect(named('wait selector modal 300')).toBe("page.waitForSelector on locator('#modal') timed out at failures.spec.ts:132");
    expect(named('goto refused 1')).toBe('page.goto /checkout: net::ERR_CONNECTION_REFUSED at failures.spec.ts:67');
    expect(named('request refused 1')).toBe('apiRequestContext.get: connect ECONNREFUSED 127.0.0.1 at failures.spec.ts:92');
    expect(named('type error 1')).toBe("TypeError: Cannot read properties of undefined (reading 'total') at failures.spec.ts:86");
    expect(named('thrown user Ann')).toBe('User "Ann" has no saved card at failures.spec.ts:79');
    // Playwright's own words when a test runs out of time, at the test's line.
    expect(failureGroupTitle({ message: 'Test timeout of 30000ms exceeded.', location: 'tests/cart.spec.ts:12:5', testTitle: 'adds to cart' })).toBe(
      'Test timeout of 30000ms exceeded at cart.spec.ts:12',
    );
  });

  it('when every failure of the corpus is titled, then no title holds a colour code and none is longer than the limit', () => {
    for (const failure of failures) {
      const title = titleOf(failure);
      expect(title.includes('\u001b') || title.includes('\n')).toBe(false);
      expect(title.length).toBeLessThanOrEqual(TITLE_TEXT_MAX + ' at failures.spec.ts:155'.length);
    }
  });

  it("when one failure of Playwright's API recurs with other values (ports, timeouts, sessions, expected texts), then its title stays the same", () => {
    const byGroup = new Map<string, Set<string>>();
    for (const failure of failures.filter((f) => !f.name.startsWith('thrown'))) {
      const group = failureSignature(failure);
      byGroup.set(group, (byGroup.get(group) ?? new Set()).add(titleOf(failure)));
    }
    expect(byGroup.size).toBeGreaterThan(15);
    for (const titles of byGroup.values()) expect([...titles]).toHaveLength(1);
  });

  it("when the corpus's distinct failures are titled, then no two share a title", () => {
    const firstOfEach = new Map<string, string>();
    for (const failure of failures) if (!firstOfEach.has(failureSignature(failure))) firstOfEach.set(failureSignature(failure), titleOf(failure));
    const titles = [...firstOfEach.values()];
    expect(new Set(titles).size).toBe(titles.length);
  });

  it('when the failure says nothing, then the title is the failed test, or a failure; a long headline is cut at a word', () => {
    expect(failureGroupTitle({ message: null, location: null, testTitle: 'pays by card' })).toBe('pays by card failed');
    expect(failureGroupTitle({ message: '\n\n', location: null, testTitle: null })).toBe('A failure');
    const long = failureGroupTitle({ message: `Error: ${'the basket '.repeat(30)}`, location: 'a.spec.ts:3:1', testTitle: null });
    expect(long.startsWith('the basket the basket')).toBe(true);
    expect(long.endsWith(' … at a.spec.ts:3')).toBe(true);
  });

  it('when a title is taken, then the next is numbered from 2', () => {
    expect(uniqueTitle('boom', new Set())).toBe('boom');
    expect(uniqueTitle('boom', new Set(['boom']))).toBe('boom (2)');
    expect(uniqueTitle('boom', new Set(['boom', 'boom (2)', 'boom (3)']))).toBe('boom (4)');
  });
});
