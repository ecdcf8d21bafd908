import { escapeXml as e } from '../xml.ts';

/** Charts drawn on the server as SVG: no script, no library, readable by a screen reader by their label. */

const WIDTH = 720;
const HEIGHT = 180;
const PAD = { left: 36, right: 36, top: 10, bottom: 24 };
const PLOT_W = WIDTH - PAD.left - PAD.right;
const PLOT_H = HEIGHT - PAD.top - PAD.bottom;

export interface DayBar {
  day: string;
  /** Stacked from the bottom, in this order. */
  parts: { value: number; colour: string; label: string }[];
  /** 0-100, drawn as a line against the right axis; null leaves a gap. */
  rate: number | null;
}

function frame(label: string, body: string): string {
  return `<svg class="chart" role="img" aria-label="${e(label)}" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" preserveAspectRatio="xMidYMid meet" xmlns="http://www.w3.org/2000/svg"><title>${e(label)}</title>${body}</svg>`;
}

function dayLabels(days: string[], x: (i: number) => number): string {
  const every = Math.max(1, Math.ceil(days.length / 8));
  return days
    .map((day, i) =>
      i % every === 0 ? `<text x="${x(i).toFixed(1)}" y="${HEIGHT - 6}" font-size="10" text-anchor="middle" fill="#57606a">${e(day.slice(5))}</text>` : '',
    )
    .join('');
}

/** Daily stacked bars with a rate line: runs a day, and their pass rate. */
export function barsWithRate(label: string, bars: DayBar[]): string {
  const max = Math.max(1, ...bars.map((bar) => bar.parts.reduce((sum, part) => sum + part.value, 0)));
  const step = PLOT_W / Math.max(1, bars.length);
  const x = (i: number) => PAD.left + step * i + step / 2;
  const width = Math.max(1, step * 0.7);
  const rects = bars
    .map((bar, i) => {
      let y = PAD.top + PLOT_H;
      return bar.parts
        .map((part) => {
          const h = (part.value / max) * PLOT_H;
          y -= h;
          return part.value > 0
            ? `<rect x="${(x(i) - width / 2).toFixed(1)}" y="${y.toFixed(1)}" width="${width.toFixed(1)}" height="${h.toFixed(1)}" fill="${part.colour}"><title>${e(bar.day)}: ${part.value} ${e(part.label)}</title></rect>`
            : '';
        })
        .join('');
    })
    .join('');
  const points = bars.map((bar, i) => (bar.rate === null ? null : `${x(i).toFixed(1)},${(PAD.top + PLOT_H - (bar.rate / 100) * PLOT_H).toFixed(1)}`));
  const segments: string[][] = [[]];
  for (const point of points) {
    if (point === null) segments.push([]);
    else segments[segments.length - 1]?.push(point);
  }
  const dots = bars
    .map((bar, i) =>
      bar.rate === null
        ? ''
        : `<circle cx="${x(i).toFixed(1)}" cy="${(PAD.top + PLOT_H - (bar.rate / 100) * PLOT_H).toFixed(1)}" r="2.5" fill="#0550ae"><title>${e(bar.day)}: pass rate ${bar.rate.toFixed(1)}%</title></circle>`,
    )
    .join('');
  const line = segments
    .filter((segment) => segment.length > 0)
    .map((segment) => `<polyline class="rate" points="${segment.join(' ')}" fill="none" stroke="#0550ae" stroke-width="2"/>`)
    .join('');
  // The rate's axis is labelled at both ends as the rate's, so that its top is not read as a day's figure.
  const axes = `<text x="4" y="${PAD.top + 10}" font-size="10" fill="#57606a">${max} runs</text><text x="${WIDTH - 4}" y="${PAD.top + 10}" class="rate" font-size="10" fill="#0550ae" text-anchor="end">rate 100%</text><text x="${WIDTH - 4}" y="${PAD.top + PLOT_H}" class="rate" font-size="10" fill="#0550ae" text-anchor="end">0%</text>
<line x1="${PAD.left}" y1="${PAD.top + PLOT_H}" x2="${WIDTH - PAD.right}" y2="${PAD.top + PLOT_H}" stroke="#d0d7de"/>`;
  return frame(
    label,
    `${axes}${rects}${line}${dots}${dayLabels(
      bars.map((bar) => bar.day),
      x,
    )}`,
  );
}

/** A daily line, its values labelled on hover. */
export function dailyLine(label: string, days: string[], values: (number | null)[]): string {
  const max = Math.max(1, ...values.map((value) => value ?? 0));
  const step = PLOT_W / Math.max(1, days.length - 1);
  const x = (i: number) => PAD.left + step * i;
  const y = (value: number) => PAD.top + PLOT_H - (value / max) * PLOT_H;
  const points = values.map((value, i) => (value === null ? '' : `${x(i).toFixed(1)},${y(value).toFixed(1)}`)).filter(Boolean);
  const dots = values
    .map((value, i) =>
      value === null
        ? ''
        : `<circle cx="${x(i).toFixed(1)}" cy="${y(value).toFixed(1)}" r="2.5" fill="#8250df"><title>${e(days[i] ?? '')}: ${value}</title></circle>`,
    )
    .join('');
  const axes = `<text x="4" y="${PAD.top + 10}" font-size="10" fill="#57606a">${max}</text><line x1="${PAD.left}" y1="${PAD.top + PLOT_H}" x2="${WIDTH - PAD.right}" y2="${PAD.top + PLOT_H}" stroke="#d0d7de"/>`;
  return frame(label, `${axes}<polyline points="${points.join(' ')}" fill="none" stroke="#8250df" stroke-width="2"/>${dots}${dayLabels(days, x)}`);
}
