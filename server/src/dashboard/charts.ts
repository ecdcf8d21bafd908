import { escapeXml as e } from '../xml.ts';

/**
 * Trends drawn as SVG, the same code on the server and in the browser (client/charts.ts imports it):
 * the server's drawing is the page's first chart, with no script; each point is a link to its run,
 * named by its value and run, so a keyboard and a screen reader reach it without the script too. The
 * script then shows the value on hover and focus, moves between points with the arrow keys and zooms
 * by drawing this function again over a range of the points (docs/decisions/charts-enhanced-svg.md).
 */

const WIDTH = 720;
const HEIGHT = 180;
const PAD = { left: 36, right: 36, top: 10, bottom: 24 };
/** A sparkline's height; its width is 5 px a point. */
const SMALL_HEIGHT = 18;

export interface TrendPoint {
  /** The axis's label: a day (YYYY-MM-DD) or a run's number. */
  x: string;
  /** Stacked from the bottom, in this order; none for a point of the line alone. */
  bars: { value: number; colour: string; label: string }[];
  /** The line's value, against its own axis; null leaves a gap. */
  line: number | null;
  /** What hover and focus show and the point's accessible name: its value and its run. */
  text: string;
  /** The point's run (a day's: its last run); null when it has none. */
  href: string | null;
}

export interface TrendChart {
  /** The chart's name: what it draws, over which range. */
  label: string;
  /** What the bars count (`runs`), named on their axis. */
  barUnit?: string;
  /** The line's colour class (`rate` or `line`), its top (100 for a rate) and unit. */
  line?: { kind: 'rate' | 'line'; max?: number; unit: string };
  /** A sparkline in a table's cell: no axes, no labels. */
  small?: boolean;
  points: TrendPoint[];
}

const LINE_COLOURS = { rate: '#0550ae', line: '#8250df' } as const;

/** The points `from` to `to` (both included) of a chart, labelled as a range of it. */
export function zoomed(chart: TrendChart, from: number, to: number): TrendChart {
  const points = chart.points.slice(from, to + 1);
  return { ...chart, points, label: `${chart.label}, from ${points[0]?.x ?? ''} to ${points[points.length - 1]?.x ?? ''}` };
}

/** The chart as SVG markup; every value in it escaped. */
export function trendSvg(chart: TrendChart): string {
  const width = chart.small ? Math.max(20, chart.points.length * 5) : WIDTH;
  const height = chart.small ? SMALL_HEIGHT : HEIGHT;
  const pad = chart.small ? { left: 0, right: 0, top: 0, bottom: 0 } : PAD;
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const n = Math.max(1, chart.points.length);
  const step = plotW / n;
  const x = (i: number) => pad.left + step * i + step / 2;
  const barMax = Math.max(1, ...chart.points.map((p) => p.bars.reduce((sum, bar) => sum + bar.value, 0)));
  const lineMax = chart.line?.max ?? Math.max(1, ...chart.points.map((p) => p.line ?? 0));
  const lineY = (value: number) => pad.top + plotH - (value / lineMax) * plotH;
  const barW = Math.max(1, step * 0.7);
  const lineColour = chart.line ? LINE_COLOURS[chart.line.kind] : LINE_COLOURS.line;
  const points = chart.points
    .map((point, i) => {
      let y = pad.top + plotH;
      const rects = point.bars
        .map((bar) => {
          const h = (bar.value / barMax) * plotH;
          y -= h;
          return bar.value > 0
            ? `<rect x="${(x(i) - barW / 2).toFixed(1)}" y="${y.toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}" fill="${e(bar.colour)}"/>`
            : '';
        })
        .join('');
      const dot =
        point.line === null || chart.small
          ? ''
          : `<circle class="${chart.line?.kind ?? 'line'}" cx="${x(i).toFixed(1)}" cy="${lineY(point.line).toFixed(1)}" r="2.5" fill="${lineColour}"/>`;
      // The whole column answers the pointer, so a thin bar or a dot need not be aimed at.
      const hit = `<rect class="hit" x="${(pad.left + step * i).toFixed(1)}" y="${pad.top}" width="${step.toFixed(1)}" height="${plotH}" fill="transparent"/>`;
      const inner = `<title>${e(point.text)}</title>${hit}${rects}${dot}`;
      return point.href
        ? `<a class="point" href="${e(point.href)}" aria-label="${e(point.text)}" data-i="${i}">${inner}</a>`
        : `<g class="point" tabindex="0" role="img" aria-label="${e(point.text)}" data-i="${i}">${inner}</g>`;
    })
    .join('');
  const segments: string[][] = [[]];
  chart.points.forEach((point, i) => {
    if (point.line === null) segments.push([]);
    else segments[segments.length - 1]?.push(`${x(i).toFixed(1)},${lineY(point.line).toFixed(1)}`);
  });
  const line = chart.line
    ? segments
        .filter((segment) => segment.length > 0)
        .map((segment) => `<polyline class="${chart.line?.kind}" points="${segment.join(' ')}" fill="none" stroke="${lineColour}" stroke-width="2"/>`)
        .join('')
    : '';
  const axes = chart.small ? '' : axesOf(chart, barMax, lineMax, x);
  return `<svg class="chart${chart.small ? ' small' : ''}" role="group" aria-label="${e(chart.label)}" viewBox="0 0 ${width} ${height}" width="${chart.small ? width : '100%'}" height="${chart.small ? height : ''}" preserveAspectRatio="xMidYMid meet" xmlns="http://www.w3.org/2000/svg">${axes}${line}${points}</svg>`.replace(
    ' height=""',
    '',
  );
}

/** The axes' ends and the points' labels, a few of them, so that they never overlap. */
function axesOf(chart: TrendChart, barMax: number, lineMax: number, x: (i: number) => number): string {
  const texts: string[] = [];
  const hasBars = chart.points.some((p) => p.bars.length > 0);
  if (hasBars) texts.push(`<text x="4" y="${PAD.top + 10}" font-size="10" fill="#57606a">${barMax} ${e(chart.barUnit ?? '')}</text>`);
  if (chart.line) {
    const top = `${Math.round(lineMax)}${chart.line.unit}`;
    // Beside bars the line has the right axis, labelled as the line's, so its top is not read as a bar's figure.
    if (hasBars)
      texts.push(
        `<text x="${WIDTH - 4}" y="${PAD.top + 10}" class="${chart.line.kind}" font-size="10" text-anchor="end">${e(top)}</text><text x="${WIDTH - 4}" y="${PAD.top + HEIGHT - PAD.top - PAD.bottom}" class="${chart.line.kind}" font-size="10" text-anchor="end">0${e(chart.line.unit)}</text>`,
      );
    else texts.push(`<text x="4" y="${PAD.top + 10}" font-size="10" fill="#57606a">${e(top)}</text>`);
  }
  const every = Math.max(1, Math.ceil(chart.points.length / 8));
  const labels = chart.points
    .map((point, i) =>
      i % every === 0
        ? `<text x="${x(i).toFixed(1)}" y="${HEIGHT - 6}" font-size="10" text-anchor="middle" fill="#57606a">${e(/^\d{4}-\d\d-\d\d$/.test(point.x) ? point.x.slice(5) : point.x)}</text>`
        : '',
    )
    .join('');
  const base = `<line x1="${PAD.left}" y1="${HEIGHT - PAD.bottom}" x2="${WIDTH - PAD.right}" y2="${HEIGHT - PAD.bottom}" stroke="#d0d7de"/>`;
  return `${texts.join('')}${base}${labels}`;
}

/**
 * The chart in its figure: the drawing, and the chart's points for the script (which zooms by
 * drawing them again). A figure of no point says so in words.
 */
export function trendFigure(chart: TrendChart): string {
  if (chart.points.length === 0) return `<p class="empty">${e(chart.label)}: nothing to draw.</p>`;
  return `<figure class="trend${chart.small ? ' small' : ''}" data-chart="${e(JSON.stringify(chart))}">${trendSvg(chart)}</figure>`;
}
