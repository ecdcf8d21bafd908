import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { markdownCode, markdownCodeBlock, markdownText } from '../../reporter/src/text/markdown.ts';
import { LIVE_REFERENCE, render } from '../helpers/markdown.ts';

// The one module that quotes text into Markdown, against a real CommonMark/GFM renderer: whatever
// the text, it comes out as the same text, with no element, link, mention or reference of its own,
// and a code span or block that it cannot close.

const HOSTILE = [
  '`',
  '``',
  '```',
  '~~~',
  '\n',
  '\n\n',
  '\r',
  '\r\n',
  '\u2028',
  ' ',
  '    ',
  '\t',
  '<',
  '>',
  '&',
  '<img src=x onerror=alert(1)>',
  '<script>alert(1)</script>',
  '<div>',
  '<!--',
  '-->',
  '<http://evil.example>',
  '@',
  '@all',
  '@octocat',
  '@acme/team',
  '#',
  '#12',
  '!12',
  '&12',
  '$12',
  'GH-12',
  'acme/shop#3',
  '[',
  ']',
  '(',
  ')',
  '![x](https://evil.example/x.png)',
  '[click](javascript:alert(1))',
  '[x]: https://evil.example',
  'https://evil.example/a_b',
  'www.evil.example',
  'mailto:a@b.example',
  'a@b.example',
  '*',
  '**',
  '_',
  '\\',
  '|',
  '---',
  '-',
  '+',
  '=',
  '1.',
  '1)',
  '&amp;',
  '&#64;',
  '&lt;b&gt;',
  ':',
  '$$',
  '~',
  '{+',
  'a',
  'main',
  'é',
];

const hostile = fc.oneof(
  fc.array(fc.constantFrom(...HOSTILE), { minLength: 1, maxLength: 12 }).map((parts) => parts.join('')),
  fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !s.includes('\0')),
);

/** The text as a quote shows it: on one line, with the zero-width spaces that break references. */
const oneLine = (value: string) => value.replace(/\r\n|[\r\n\u0085\u2028\u2029]/g, ' ');
const shown = (prose: string) => prose.replace(/\u200B/g, '');

describe('quoting text into Markdown', () => {
  it('when any text is quoted in a paragraph, a heading or at the start of a line, then it shows as itself and nothing else comes out', () => {
    fc.assert(
      fc.property(hostile, (value) => {
        const quoted = markdownText(value);
        for (const [markdown, element, before, after] of [
          [`Before ${quoted} after`, 'p', 'Before ', ' after'],
          [`### ${quoted} (failed)`, 'h3', '', ' (failed)'],
          [`Intro\n\n${quoted} · after`, 'p', '', ' · after'],
        ] as const) {
          const out = render(markdown);
          expect(out.tags.filter((tag) => tag !== element && tag !== 'p')).toEqual([]);
          expect(out.links).toEqual([]);
          expect(out.code).toEqual([]);
          expect(shown(out.prose)).toContain(`${before}${oneLine(value)}${after}`.trim());
          expect(out.prose).not.toMatch(LIVE_REFERENCE);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('when any text is quoted as inline code, then the span holds exactly the text and stays closed', () => {
    fc.assert(
      fc.property(hostile, (value) => {
        const out = render(`branch ${markdownCode(value)} · commit ${markdownCode('abc')}`);
        expect(out.tags).toEqual(['p', 'code', 'code']);
        expect(out.code).toEqual([oneLine(value), 'abc']);
        expect(out.links).toEqual([]);
        expect(out.prose.trim()).toBe('branch   · commit');
      }),
      { numRuns: 500 },
    );
  });

  it('when any lines are quoted as a code block, then the block holds exactly them and what follows is outside it', () => {
    fc.assert(
      fc.property(fc.array(hostile, { minLength: 1, maxLength: 5 }), (lines) => {
        const out = render([...markdownCodeBlock(lines), '', 'After **the** block'].join('\n'));
        expect(out.tags).toEqual(['pre', 'code', 'p', 'strong']);
        expect(out.code).toEqual([`${lines.flatMap((line) => line.split(/\r\n|\r/)).join('\n')}\n`]);
        expect(out.prose.trim()).toBe('After  the  block');
      }),
      { numRuns: 300 },
    );
  });

  it('when a branch holds a newline and raw HTML, then it stays in its code span (the shape issue 49 found)', () => {
    const branch = 'feature\n\n<img src=x onerror=alert(1)>`x`';
    const out = render(`Environment **staging**, branch ${markdownCode(branch)}.`);
    expect(out.tags).toEqual(['p', 'strong', 'code']);
    expect(out.code).toEqual(['feature  <img src=x onerror=alert(1)>`x`']);
  });
});
