// Markdown that Proctor writes (a run's summary.md, the MCP resource proctor://runs/{id}, pull and
// merge request comments on GitHub and GitLab, the GitHub Action's job summary) quotes what
// reporters, tests and repositories said: titles, file paths, branches, commits, errors, failure
// groups' titles. Whatever they hold, the quote stays text where it is put, on CommonMark, GitHub
// (GFM) and GitLab alike: no HTML element, no link or image, no mention or cross-reference, no
// emphasis or heading, no way out of a code span or a code block. docs/security.md says what each
// rule is for. It lives in the reporter package, with no dependency, because the action bundles the
// reporter package and cannot import the server; the server imports it as @proctor/reporter/markdown.

/**
 * Put after a character that would otherwise start a mention, a cross-reference or an autolink:
 * invisible, it is not a word character, so GitHub's and GitLab's filters (which run on the rendered
 * text, after entities are decoded, so `&#64;` would not do) no longer see `@all` or `#12`.
 */
const ZERO_WIDTH_SPACE = '\u200B';

/** CommonMark's line endings (and the Unicode ones some renderers honour): a quote never starts a line or ends a paragraph. */
function oneLine(value: string): string {
  return value.replace(/\r\n|[\r\n\u0085\u2028\u2029]/g, ' ');
}

/**
 * What GitHub and GitLab would turn into a notification or a link from plain text: any `@` (a
 * person, a team, GitLab's `@all`, an email address), `#12`, `!12`, `&12`, `$12` and `GH-12`
 * (issues, pull and merge requests, epics and snippets, each told "mentioned in"), and the bare
 * URLs of GFM's autolinks (`https://`, `www.`).
 */
function neutralised(value: string): string {
  return value
    .replace(/@/g, `@${ZERO_WIDTH_SPACE}`)
    .replace(/([#!&$])(?=\d)/g, `$1${ZERO_WIDTH_SPACE}`)
    .replace(/\b(GH)-(?=\d)/gi, `$1-${ZERO_WIDTH_SPACE}`)
    .replace(/:(?=\/\/)/g, `:${ZERO_WIDTH_SPACE}`)
    .replace(/(www)\./gi, `$1${ZERO_WIDTH_SPACE}.`);
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/**
 * Quoted text in running Markdown: one line; `&`, `<` and `>` as entities (no HTML, no entity of
 * the text's own); the characters of emphasis, links, images, code, tables, strikethrough, math and
 * headings' closing `#`s backslash-escaped; mentions, references and bare URLs neutralised. Safe at
 * the start or the end of a line too: a leading list marker, ordered list number, setext `=` or
 * indentation loses its meaning, and trailing spaces make no line break.
 */
export function markdownText(value: string): string {
  const text = neutralised(oneLine(value))
    .replace(/[&<>]/g, (c) => ENTITIES[c] as string)
    .replace(/[\\`*_[\]~|#$]/g, (c) => `\\${c}`);
  return text
    .replace(/^[ \t]+|[ \t]+$/g, (space) => space.replace(/[ \t]/g, (c) => `&#${c.charCodeAt(0)};`))
    .replace(/^([+\-=])/, '\\$1')
    .replace(/^(\d+)([.)])/, '$1\\$2');
}

/** The longest run of backticks in `value`. */
function longestBacktickRun(value: string): number {
  return Math.max(0, ...[...value.matchAll(/`+/g)].map((run) => run[0].length));
}

/**
 * Quoted text as an inline code span that the text cannot close: its fence is one backtick longer
 * than any run of backticks in it, its line endings are spaces (a line ending inside could end the
 * paragraph, and the span with it), and a space pads a text that starts or ends with a backtick or
 * with a space (CommonMark strips one each side, so the text shows as it is). Inside, nothing is
 * Markdown: no HTML, link or mention can come out of it.
 */
export function markdownCode(value: string): string {
  const text = oneLine(value);
  if (text === '') return '` `';
  const fence = '`'.repeat(longestBacktickRun(text) + 1);
  const padded = /^[` ]|[` ]$/.test(text) && text.trim() !== '' ? ` ${text} ` : text;
  return `${fence}${padded}${fence}`;
}

/**
 * Quoted lines as a fenced code block that they cannot close: its fence is made of backticks, at
 * least three and one more than any run of backticks in the lines, so no line of them is a closing
 * fence. Returns the block's lines, fences included.
 */
export function markdownCodeBlock(lines: string[]): string[] {
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(lines.join('\n')) + 1));
  return [fence, ...lines.flatMap((line) => line.split(/\r\n|\r/)), fence];
}
