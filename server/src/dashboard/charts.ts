/**
 * Trends drawn as SVG, the same code on the server and in the browser (client/charts.ts imports it):
 * this draws the chart as a tree of SVG elements, their attributes and texts as plain values, never
 * markup: the server renders the tree as a component (components/trend.tsx, escaped by Preact), the
 * browser's script builds it with the DOM (text nodes and setAttribute), so that nothing in a chart
 * is escaped by hand. The server's drawing is the page's first chart, with no script; each point is a link to its run,
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

/** An SVG element: its tag, attributes (in order) and children (elements, or texts). */
export interface SvgNode {
  tag: 'svg' | 'a' | 'g' | 'rect' | 'circle' | 'polyline' | 'line' | 'text' | 'title';
  attrs: Record<string, string>;
  children: (SvgNode | string)[];
}

const node = (tag: SvgNode['tag'], attrs: Record<string, string>, ...children: (SvgNode | string | null)[]): SvgNode => ({
  tag,
  attrs,
  children: children.filter((child): child is SvgNode | string => child !== null),
});

/** The chart as a tree of SVG elements. */
export function trendSvg(chart: TrendChart): SvgNode {
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
  const points = chart.points.map((point, i) => {
    let y = pad.top + plotH;
    const rects = point.bars.map((bar) => {
      const h = (bar.value / barMax) * plotH;
      y -= h;
      return bar.value > 0
        ? node('rect', { x: (x(i) - barW / 2).toFixed(1), y: y.toFixed(1), width: barW.toFixed(1), height: h.toFixed(1), fill: bar.colour })
        : null;
    });
    const dot =
      point.line === null || chart.small
        ? null
        : node('circle', { class: chart.line?.kind ?? 'line', cx: x(i).toFixed(1), cy: lineY(point.line).toFixed(1), r: '2.5', fill: lineColour });
    // The whole column answers the pointer, so a thin bar or a dot need not be aimed at.
    const hit = node('rect', {
      class: 'hit',
      x: (pad.left + step * i).toFixed(1),
      y: String(pad.top),
      width: step.toFixed(1),
      height: String(plotH),
      fill: 'transparent',
    });
    const inner = [node('title', {}, point.text), hit, ...rects, dot];
    return point.href
      ? node('a', { class: 'point', href: point.href, 'aria-label': point.text, 'data-i': String(i) }, ...inner)
      : node('g', { class: 'point', tabindex: '0', role: 'img', 'aria-label': point.text, 'data-i': String(i) }, ...inner);
  });
  const segments: string[][] = [[]];
  chart.points.forEach((point, i) => {
    if (point.line === null) segments.push([]);
    else segments[segments.length - 1]?.push(`${x(i).toFixed(1)},${lineY(point.line).toFixed(1)}`);
  });
  const line = chart.line
    ? segments
        .filter((segment) => segment.length > 0)
        .map((segment) =>
          node('polyline', { class: chart.line?.kind ?? 'line', points: segment.join(' '), fill: 'none', stroke: lineColour, 'stroke-width': '2' }),
        )
    : [];
  const axes = chart.small ? [] : axesOf(chart, barMax, lineMax, x);
  const size: Record<string, string> = chart.small ? { width: String(width), height: String(height) } : { width: '100%' };
  return node(
    'svg',
    {
      class: `chart${chart.small ? ' small' : ''}`,
      role: 'group',
      'aria-label': chart.label,
      viewBox: `0 0 ${width} ${height}`,
      ...size,
      preserveAspectRatio: 'xMidYMid meet',
      xmlns: 'http://www.w3.org/2000/svg',
    },
    ...axes,
    ...line,
    ...points,
  );
}

/** The axes' ends and the points' labels, a few of them, so that they never overlap. */
function axesOf(chart: TrendChart, barMax: number, lineMax: number, x: (i: number) => number): SvgNode[] {
  const texts: SvgNode[] = [];
  const rightLabel = (y: number, text: string) =>
    node('text', { x: String(WIDTH - 4), y: String(y), class: chart.line?.kind ?? 'line', 'font-size': '10', 'text-anchor': 'end' }, text);
  const hasBars = chart.points.some((p) => p.bars.length > 0);
  if (hasBars) texts.push(node('text', { x: '4', y: String(PAD.top + 10), 'font-size': '10', fill: '#57606a' }, `${barMax} ${chart.barUnit ?? ''}`));
  if (chart.line) {
    const top = `${Math.round(lineMax)}${chart.line.unit}`;
    // Beside bars the line has the right axis, labelled as the line's, so its top is not read as a bar's figure.
    if (hasBars) texts.push(rightLabel(PAD.top + 10, top), rightLabel(PAD.top + HEIGHT - PAD.top - PAD.bottom, `0${chart.line.unit}`));
    else texts.push(node('text', { x: '4', y: String(PAD.top + 10), 'font-size': '10', fill: '#57606a' }, top));
  }
  const every = Math.max(1, Math.ceil(chart.points.length / 8));
  const labels = chart.points.flatMap((point, i) =>
    i % every === 0
      ? [
          node(
            'text',
            { x: x(i).toFixed(1), y: String(HEIGHT - 6), 'font-size': '10', 'text-anchor': 'middle', fill: '#57606a' },
            /^\d{4}-\d\d-\d\d$/.test(point.x) ? point.x.slice(5) : point.x,
          ),
        ]
      : [],
  );
  const base = node('line', {
    x1: String(PAD.left),
    y1: String(HEIGHT - PAD.bottom),
    x2: String(WIDTH - PAD.right),
    y2: String(HEIGHT - PAD.bottom),
    stroke: '#d0d7de',
  });
  return [...texts, base, ...labels];
}
