import { describe, expect, it } from 'vitest';
import { BADGE_CONTENT_TYPES, BADGE_STYLES, formatSvg, renderBadge, renderJson, renderPng, renderSvg, type BadgeSpec } from '@proctor/badge';
import { countTextPixels, decodePng, hasPngSignature } from '../../test/helpers/png.ts';

const passing: BadgeSpec = { label: 'e2e', message: 'passing', color: 'brightgreen', style: 'flat' };

describe('@proctor/badge as a library', () => {
  it('when a description is drawn in each style, then the SVG says it in its title and aria-label, and matches its snapshot', () => {
    for (const style of BADGE_STYLES) {
      const svg = renderSvg({ ...passing, style });
      // for-the-badge says it in capitals.
      expect(svg.toLowerCase()).toContain('<title>e2e: passing</title>');
      expect(svg).toContain('role="img"');
      expect(svg.toLowerCase()).toContain('aria-label="e2e: passing"');
      expect(formatSvg(svg)).toMatchSnapshot(style);
    }
  });

  it('when the label holds markup and quotes, then the SVG escapes them', () => {
    const svg = renderSvg({ ...passing, label: `<script>alert("x")</script> & 'q'` });
    expect(svg).not.toContain('<script');
    expect(svg).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &apos;q&apos;');
  });

  it("when a PNG is drawn, then it is the SVG's size, doubled at scale 2, with its text drawn in the bundled font", () => {
    const svg = renderSvg(passing);
    const width = Number(/width="(\d+)"/.exec(svg)?.[1]);
    const one = renderPng(svg, 1);
    expect(hasPngSignature(one)).toBe(true);
    const image = decodePng(one);
    expect([image.width, image.height]).toEqual([width, 20]);
    expect(countTextPixels(image, 0, image.width)).toBeGreaterThan(40);
    const two = decodePng(renderPng(svg, 2));
    expect([two.width, two.height]).toEqual([width * 2, 40]);
  });

  it('when no font is given, then the text vanishes: the text-pixel check can fail', () => {
    const svg = renderSvg({ label: 'tests', message: 'passing', color: 'brightgreen', style: 'flat' });
    const withFont = decodePng(renderPng(svg, 1));
    const withoutFont = decodePng(renderPng(svg, 1, null));
    expect(countTextPixels(withoutFont, 0, withoutFont.width)).toBe(0);
    expect(countTextPixels(withFont, 0, withFont.width)).toBeGreaterThan(40);
  });

  it('when one description is drawn in the three formats, then each is what its Content-Type says and says the same', () => {
    const spec: BadgeSpec = { ...passing, message: 'failing', color: 'red', labelColor: '#555' };
    expect(renderJson(spec)).toEqual({ schemaVersion: 1, label: 'e2e', message: 'failing', color: 'red' });
    expect(JSON.parse(renderBadge(spec, 'json').toString('utf8'))).toEqual(renderJson(spec));
    expect(renderBadge(spec, 'svg').toString('utf8')).toBe(renderSvg(spec));
    expect(hasPngSignature(renderBadge(spec, 'png', { scale: 2 }))).toBe(true);
    expect(BADGE_CONTENT_TYPES).toEqual({ svg: 'image/svg+xml; charset=utf-8', png: 'image/png', json: 'application/json; charset=utf-8' });
  });
});
