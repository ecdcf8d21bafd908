import { describe, expect, it } from 'vitest';
import corpus from '../fixtures/signature-corpus.json' with { type: 'json' };
import { failureMode, failureSignature } from '../../reporter/src/text/signature.ts';

// Real Playwright failures (test/fixtures/signature-corpus: a suite that fails on purpose, and the
// reporter that recorded its messages). Names group them: a family is one failing line run with
// different values (ports, timeouts, ids, expected texts), so each family is one failure mode.
interface Failure {
  name: string;
  message: string;
  file: string | null;
  line: number | null;
}

const failures = corpus as Failure[];
const byName = new Map(failures.map((f) => [f.name, f]));
const id = (name: string) => {
  const failure = byName.get(name);
  if (!failure) throw new Error(`no failure named ${name} in the corpus`);
  return failureSignature(failure);
};

const FAMILIES: Record<string, string[]> = {
  'banner text': ['text banner Welcome back', 'text banner Hi Ann', 'text banner Hello, member 42', 'text banner Bonjour'],
  'title text': ['text title Store', 'text title Market'],
  'item count': ['count items 3', 'count items 5', 'count items 7'],
  'disabled button click': ['click buy 400', 'click buy 600', 'click buy 800'],
  'missing role click': ['click missing role 400', 'click missing role 700'],
  'missing label fill': ['fill missing email 400', 'fill missing email 700'],
  'navigation refused': ['goto refused 1', 'goto refused 2', 'goto refused 3'],
  'thrown with ids': ['thrown order 4711', 'thrown order 982374', 'thrown order 1a2b3c4d5e6f7a8b9c0d'],
  'thrown with quoted names': ['thrown user Ann', "thrown user Bob O'Neil", 'thrown user Zoë'],
  'type error': ['type error 1', 'type error 2'],
  'request refused': ['request refused 1', 'request refused 2', 'request refused 3'],
  'toBe numbers': ['toBe numbers 2', 'toBe numbers 10', 'toBe numbers 99'],
  'toEqual objects': ['toEqual objects 1', 'toEqual objects 7'],
  'URL mismatch': ['url /orders/17', 'url /orders/23'],
  'toast not visible': ['visible toast 300', 'visible toast 500'],
  'button not enabled': ['enabled buy 300', 'enabled buy 500'],
  'selector wait': ['wait selector modal 300', 'wait selector modal 500'],
  'thrown with timestamps': ['thrown timestamp 2026-01-02T10:11:12Z', 'thrown timestamp 2025-12-31T23:59:59.123Z'],
  'thrown with temp paths': ['thrown temp path 40x1Yz', 'thrown temp path 40Q9k2'],
  'helper click on #cart': ['helper click #cart 300', 'helper click #cart 500'],
  'helper click on #wishlist': ['helper click #wishlist 300', 'helper click #wishlist 500'],
};

const samePairs = Object.entries(FAMILIES).flatMap(([family, names]) => names.flatMap((a, i) => names.slice(i + 1).map((b) => [family, a, b] as const)));

// The close calls: same assertion on another locator, same locator at another line, same line
// waiting for another locator, same action kind on another target.
const TARGETED_DIFFERENT: [string, string][] = [
  ['text banner Welcome back', 'text title Store'],
  ['text banner Welcome back', 'text banner at another line'],
  ['helper click #cart 300', 'helper click #wishlist 300'],
  ['helper click #cart 500', 'helper click #wishlist 300'],
  ['click buy 400', 'click missing role 400'],
  ['click missing role 400', 'fill missing email 400'],
  ['visible toast 300', 'wait selector modal 300'],
  ['enabled buy 300', 'click buy 400'],
  ['toBe numbers 2', 'toEqual objects 1'],
  ['goto refused 1', 'request refused 1'],
  ['thrown order 4711', 'thrown user Ann'],
  ['type error 1', 'thrown order 4711'],
];
const representatives = Object.values(FAMILIES).map((names) => names[0] as string);
const differentPairs = [...TARGETED_DIFFERENT, ...representatives.flatMap((a, i) => representatives.slice(i + 1).map((b) => [a, b] as [string, string]))];

describe('failure signature over real Playwright failures', () => {
  it('has at least 40 pairs that must share a group and 40 that must not', () => {
    expect(samePairs.length).toBeGreaterThanOrEqual(40);
    expect(differentPairs.length).toBeGreaterThanOrEqual(40);
  });

  it.each(samePairs)('when two failures are the same mode (%s), then they share a group: %s ~ %s', (_family, a, b) => {
    expect(id(a), `${failureMode(byName.get(a) as Failure)}\n---\n${failureMode(byName.get(b) as Failure)}`).toBe(id(b));
  });

  it.each(differentPairs)('when %s and %s are different modes, then their groups differ', (a, b) => {
    expect(id(a)).not.toBe(id(b));
  });

  it('when the message carries colour codes, then the group is the same as without them', () => {
    const failure = byName.get('text banner Welcome back') as Failure;
    // eslint-disable-next-line no-control-regex -- removing the colour codes is the point
    expect(failureSignature({ ...failure, message: failure.message.replace(/\u001b\[\d+m/g, '') })).toBe(failureSignature(failure));
  });

  it('when ids are made, then they are stable strings of the form fg_ and 20 hex', () => {
    expect(id('thrown order 4711')).toMatch(/^fg_[0-9a-f]{20}$/);
    expect(failureSignature({ message: 'Error: x', file: 'a.spec.ts', line: 3 })).toBe(failureSignature({ message: 'Error: x', file: 'a.spec.ts', line: 3 }));
  });
});
