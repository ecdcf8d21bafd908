// A failure group's title, as a person names a failure: what failed, on what, and where
// (`expect(locator('#banner')).toHaveText at checkout.spec.ts:26`), from the first failure seen.
// Pure: the group's store makes it unique within the project.

import { stripAnsi } from '@proctor/reporter/signature';

/** Longest title before where it failed; a longer one is cut at a word and marked `…`. */
export const TITLE_TEXT_MAX = 100;
export const TITLE_MAX = 200;

/** `expect(locator).toHaveText(expected) failed`, `expect(received).toBe(expected) // Object.is equality` */
const EXPECT = /^expect\((\w+)\)\.((?:not\.)?\w+)\b/;
/** `locator.click: Timeout 400ms exceeded.`, `page.waitForSelector: Timeout 300ms exceeded.` */
const ACTION_TIMEOUT = /^(\w+\.\w+): Timeout \d+ms exceeded\.?$/;
/** `page.goto: net::ERR_CONNECTION_REFUSED at http://127.0.0.1:37985/checkout?session=1` */
const NAVIGATION = /^(\w+\.\w+): (net::ERR_\w+|NS_ERROR_\w+) at (\S+)$/;

function plain(message: string): { head: string[]; callLog: string[] } {
  const [head = '', callLog = ''] = stripAnsi(message).split(/\n\s*Call log:/);
  return { head: head.split('\n'), callLog: callLog.split('\n') };
}

/**
 * The first line that says something, without the `Error: ` every thrown error starts with (and
 * Playwright's `TimeoutError: `, which the headline says as "timed out"); other kinds stay.
 */
function firstMeaningfulLine(lines: string[]): string | null {
  const line = lines.map((candidate) => candidate.trim()).find((candidate) => candidate !== '');
  return line ? line.replace(/^(Error|TimeoutError): /, '') : null;
}

/** What the failing call waited for, from its call log, or the `Locator:` line of an expect's message. */
function target(head: string[], callLog: string[]): string | null {
  const locator = head.map((line) => /^\s*Locator:\s+(.+)$/.exec(line)?.[1]).find(Boolean);
  if (locator) return locator.trim();
  const waited = callLog.map((line) => /^\s*-\s*waiting for (.+)$/.exec(line)?.[1]).find(Boolean);
  return waited ? waited.replace(/\s+to be (visible|hidden|attached|detached)$/, '').trim() : null;
}

/**
 * What changes from run to run and says nothing of the failure: a URL's query and fragment
 * (sessions, ids), and the port of a server the test started.
 */
function withoutVolatileParts(text: string): string {
  return text.replace(/(https?:\/\/[^\s"'`)?#]+)[?#][^\s"'`)]*/g, '$1').replace(/\b(localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\]):\d+/g, '$1');
}

/** A URL's path: the origin differs between environments, the page does not. */
function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max - 2);
  const atWord = head.lastIndexOf(' ');
  return `${(atWord > max / 2 ? head.slice(0, atWord) : head).trimEnd()} …`;
}

/** `tests/checkout.spec.ts:42:7` → `checkout.spec.ts:42`. */
export function shortLocation(location: string | null): string | null {
  const match = location ? /^(.*?):(\d+)(?::\d+)?$/.exec(location) : null;
  if (!match) return null;
  const file = (match[1] ?? '').split(/[\\/]/).pop();
  return file ? `${file}:${match[2]}` : null;
}

/** What failed, as a sentence's subject: the matcher and its locator, the action and its target, or the error's first line. */
export function failureHeadline(message: string): string | null {
  const { head, callLog } = plain(message);
  const line = firstMeaningfulLine(head);
  if (!line) return null;
  const on = target(head, callLog);
  const expectation = EXPECT.exec(line);
  if (expectation) return `expect(${on ?? expectation[1]}).${expectation[2]}`;
  const timeout = ACTION_TIMEOUT.exec(line);
  if (timeout) return `${timeout[1]}${on ? ` on ${on}` : ''} timed out`;
  const navigation = NAVIGATION.exec(line);
  if (navigation) return `${navigation[1]} ${pathOf(navigation[3] ?? '')}: ${navigation[2]}`;
  return withoutVolatileParts(line).replace(/\.$/, '');
}

/** A new group's title: its first failure's headline and where it failed; the test's title when the failure says nothing. */
export function failureGroupTitle(failure: { message: string | null; location: string | null; testTitle: string | null }): string {
  const headline = failure.message ? failureHeadline(failure.message) : null;
  const where = shortLocation(failure.location);
  const what = cut(headline ?? (failure.testTitle ? `${failure.testTitle} failed` : 'A failure'), TITLE_TEXT_MAX);
  return where ? `${what} at ${where}` : what;
}

/** The title made unique against those the project's other groups hold: `… (2)`, `… (3)`. */
export function uniqueTitle(title: string, taken: ReadonlySet<string>): string {
  if (!taken.has(title)) return title;
  for (let n = 2; ; n++) {
    const candidate = `${title} (${n})`;
    if (!taken.has(candidate)) return candidate;
  }
}
