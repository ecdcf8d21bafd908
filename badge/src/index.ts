import { fileURLToPath } from 'node:url';
import { Resvg } from '@resvg/resvg-js';
import { makeBadge } from 'badge-maker';
import type { BadgeFormat, BadgeSpec, EndpointBadge } from './spec.ts';

export * from './spec.ts';

/** How many badges were drawn: a cache in front of these is judged by it. */
export const renderCounts = { svg: 0, png: 0 };

/** Shipped with the package, so the PNG always has text: resvg draws nothing for a missing font. */
export const BADGE_FONT = fileURLToPath(new URL('../fonts/DejaVuSans.ttf', import.meta.url));

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

/** The SVG drawn as a PNG, at 1 or 2 times its size, with `fontFile` (the bundled DejaVu Sans by default; null: no text). */
export function renderPng(svg: string, scale: 1 | 2, fontFile: string | null = BADGE_FONT): Buffer {
  renderCounts.png++;
  const resvg = new Resvg(svg, {
    fitTo: { mode: 'zoom', value: scale },
    font: { fontFiles: fontFile ? [fontFile] : [], loadSystemFonts: false, defaultFontFamily: 'DejaVu Sans' },
  });
  return resvg.render().asPng();
}

/** The shields.io endpoint badge of a description: shields.io draws it from this JSON (its style and label colour are shields.io's query). */
export function renderJson(spec: BadgeSpec): EndpointBadge {
  return { schemaVersion: 1, label: spec.label, message: spec.message, color: spec.color };
}

/** One description drawn in one format, as the bytes to serve (Content-Type: `BADGE_CONTENT_TYPES[format]`). */
export function renderBadge(spec: BadgeSpec, format: BadgeFormat, options: { scale?: 1 | 2 } = {}): Buffer {
  if (format === 'json') return Buffer.from(JSON.stringify(renderJson(spec)));
  const svg = renderSvg(spec);
  return format === 'png' ? renderPng(svg, options.scale ?? 1) : Buffer.from(svg);
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
