import { fileURLToPath } from 'node:url';
import { Resvg } from '@resvg/resvg-js';
import { makeBadge } from 'badge-maker';
import type { BadgeSpec } from './schema.ts';

/** How many badges were drawn: the cache in front of these is judged by it. */
export const renderCounts = { svg: 0, png: 0 };

/** Shipped with the package, so the PNG always has text: resvg draws nothing for a missing font. */
export const BADGE_FONT = fileURLToPath(new URL('../../fonts/DejaVuSans.ttf', import.meta.url));

/**
 * The badge as shields.io draws it: badge-maker lays the text out from fixed Verdana metrics and
 * escapes every string; the SVG carries <title>, role="img" and aria-label.
 */
export function renderSvg(spec: BadgeSpec): string {
  renderCounts.svg++;
  return makeBadge({
    label: spec.label,
    message: spec.message,
    color: spec.color,
    ...(spec.labelColor ? { labelColor: spec.labelColor } : {}),
    style: spec.style,
  });
}

export function renderPng(svg: string, scale: 1 | 2, fontFile: string | null = BADGE_FONT): Buffer {
  renderCounts.png++;
  const resvg = new Resvg(svg, {
    fitTo: { mode: 'zoom', value: scale },
    font: { fontFiles: fontFile ? [fontFile] : [], loadSystemFonts: false, defaultFontFamily: 'DejaVu Sans' },
  });
  return resvg.render().asPng();
}

/** The SVG one element a line, for reading and for snapshots. */
export function formatSvg(svg: string): string {
  let depth = 0;
  return svg
    .replace(/>\s*</g, '>\n<')
    .split('\n')
    .map((line) => {
      if (line.startsWith('</')) depth--;
      const indented = `${'  '.repeat(Math.max(0, depth))}${line}`;
      if (!line.startsWith('</') && !line.endsWith('/>') && !/<\/[\w:-]+>$/.test(line) && !line.startsWith('<?')) depth++;
      return indented;
    })
    .join('\n');
}
