import { type SvgNode, type TrendChart, trendSvg, zoomed } from '../charts.ts';

/**
 * The server's charts made readable (server/src/dashboard/charts.ts draws them): a point's value and
 * run shown on hover and on focus, one tab stop a chart with the arrow keys moving between its points
 * (Home, End too), and a zoom to a range: dragged across the chart, or chosen in its From and To
 * lists, with Reset. Zooming draws the chart again from its points, by the server's own code, its
 * tree of elements built with the DOM (texts as text nodes, values by setAttribute): no markup.
 */
export function enhanceCharts(root: Document): void {
  for (const figure of Array.from(root.querySelectorAll<HTMLElement>('figure.trend[data-chart]'))) {
    const chart = JSON.parse(figure.dataset.chart ?? '') as TrendChart;
    new ChartView(figure, chart);
  }
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** charts.ts's drawing as DOM elements (the namespace is the element's, not an attribute). */
function svgElement(node: SvgNode): SVGElement {
  const element = document.createElementNS(SVG_NS, node.tag);
  for (const [name, value] of Object.entries(node.attrs)) if (name !== 'xmlns') element.setAttribute(name, value);
  for (const child of node.children) element.append(typeof child === 'string' ? document.createTextNode(child) : svgElement(child));
  return element;
}

class ChartView {
  private from = 0;
  private to: number;
  private readonly tip: HTMLElement;
  private readonly band: HTMLElement;
  private fromList: HTMLSelectElement | null = null;
  private toList: HTMLSelectElement | null = null;
  private readonly reset: HTMLButtonElement;
  /** Where a drag began (a point's index in the whole chart), and whether it crossed points. */
  private dragStart: number | null = null;
  private dragged = false;

  constructor(
    private readonly figure: HTMLElement,
    private readonly chart: TrendChart,
  ) {
    this.to = chart.points.length - 1;
    this.tip = element('div', 'chart-tip');
    // The focused point's name says the same to a screen reader: the tip is for the eyes.
    this.tip.setAttribute('aria-hidden', 'true');
    this.tip.hidden = true;
    this.band = element('div', 'chart-band');
    this.band.hidden = true;
    this.reset = element('button', 'chart-reset') as HTMLButtonElement;
    this.reset.type = 'button';
    this.reset.textContent = 'Reset zoom';
    this.reset.addEventListener('click', () => this.zoom(0, this.chart.points.length - 1));
    const controls = element('div', 'chart-zoom');
    if (!chart.small && chart.points.length > 2) {
      this.fromList = this.pointList('from');
      this.toList = this.pointList('to');
      controls.append(labelled(this.fromList), labelled(this.toList));
    } else {
      this.reset.hidden = true;
    }
    controls.append(this.reset);
    figure.append(this.tip, this.band, controls);
    this.listen();
    this.draw(false);
  }

  private pointList(name: string): HTMLSelectElement {
    const list = document.createElement('select');
    list.name = name;
    // Named by its label's words alone, not by the options a label's text would add.
    list.setAttribute('aria-label', `Zoom ${name}`);
    this.chart.points.forEach((point, i) => list.append(new Option(point.x, String(i))));
    list.addEventListener('change', () => {
      const a = Number(this.fromList?.value ?? 0);
      const b = Number(this.toList?.value ?? 0);
      this.zoom(Math.min(a, b), Math.max(a, b));
    });
    return list;
  }

  private zoom(from: number, to: number): void {
    this.from = from;
    this.to = to;
    this.draw(true);
  }

  /** Draws the range shown; `focus` keeps the keyboard in the chart after a zoom. */
  private draw(focus: boolean): void {
    const whole = this.from === 0 && this.to === this.chart.points.length - 1;
    const shown = whole ? this.chart : zoomed(this.chart, this.from, this.to);
    const svg = this.figure.querySelector('svg.chart');
    if (svg && (focus || !whole)) svg.replaceWith(svgElement(trendSvg(shown)));
    if (this.fromList) this.fromList.value = String(this.from);
    if (this.toList) this.toList.value = String(this.to);
    this.figure.classList.toggle('zoomed', !whole);
    if (this.chart.small) this.reset.hidden = whole;
    const points = this.points();
    // One tab stop a chart, on its newest point: the arrow keys move from there.
    points.forEach((point, i) => {
      point.querySelector('title')?.remove();
      point.setAttribute('tabindex', i === points.length - 1 ? '0' : '-1');
    });
    if (focus) points[points.length - 1]?.focus();
  }

  private points(): SVGElement[] {
    return Array.from(this.figure.querySelectorAll<SVGElement>('svg.chart .point'));
  }

  /** The point under the pointer's x, by the columns the server drew (`rect.hit`). */
  private pointAt(clientX: number): number | null {
    const points = this.points();
    for (const [i, point] of points.entries()) {
      const box = point.querySelector('rect.hit')?.getBoundingClientRect();
      if (box && clientX >= box.left && clientX < box.right) return i;
    }
    if (points.length === 0) return null;
    const first = points[0]?.getBoundingClientRect();
    return first && clientX < first.left ? 0 : points.length - 1;
  }

  private show(point: SVGElement): void {
    this.tip.textContent = point.getAttribute('aria-label');
    this.tip.hidden = false;
    const box = point.querySelector('rect.hit')?.getBoundingClientRect() ?? point.getBoundingClientRect();
    const frame = this.figure.getBoundingClientRect();
    const centre = box.left + box.width / 2 - frame.left;
    // Kept inside the figure: on a phone the tip is as wide as the screen allows.
    const left = Math.max(0, Math.min(centre - this.tip.offsetWidth / 2, frame.width - this.tip.offsetWidth));
    this.tip.style.left = `${left}px`;
    this.tip.style.top = `${Math.max(0, box.top - frame.top - this.tip.offsetHeight - 4)}px`;
  }

  private hide(): void {
    this.tip.hidden = true;
  }

  private listen(): void {
    const pointOf = (target: EventTarget | null) => (target instanceof Element ? target.closest<SVGElement>('.point') : null);
    this.figure.addEventListener('pointerover', (event) => {
      const point = pointOf(event.target);
      if (point) this.show(point);
    });
    this.figure.addEventListener('pointerleave', () => this.hide());
    this.figure.addEventListener('focusin', (event) => {
      const point = pointOf(event.target);
      if (point) this.show(point);
    });
    this.figure.addEventListener('focusout', () => this.hide());
    this.figure.addEventListener('keydown', (event) => {
      const point = pointOf(event.target);
      if (!point) return;
      const points = this.points();
      const at = points.indexOf(point);
      const next = { ArrowLeft: at - 1, ArrowRight: at + 1, ArrowDown: at - 1, ArrowUp: at + 1, Home: 0, End: points.length - 1 }[event.key];
      if (next === undefined) return;
      event.preventDefault();
      const target = points[Math.max(0, Math.min(points.length - 1, next))];
      if (!target) return;
      point.setAttribute('tabindex', '-1');
      target.setAttribute('tabindex', '0');
      target.focus();
    });
    // A drag across the chart zooms to the points it crossed; a click (no drag) follows the point's link.
    this.figure.addEventListener('pointerdown', (event) => {
      if (!pointOf(event.target) || event.button !== 0) return;
      this.dragStart = this.pointAt(event.clientX);
      this.dragged = false;
    });
    this.figure.addEventListener('pointermove', (event) => {
      if (this.dragStart === null) return;
      const at = this.pointAt(event.clientX);
      if (at === null || at === this.dragStart) return;
      this.dragged = true;
      event.preventDefault();
      this.markBand(this.dragStart, at);
    });
    const end = (event: PointerEvent) => {
      if (this.dragStart === null) return;
      const start = this.dragStart;
      const at = this.pointAt(event.clientX);
      this.dragStart = null;
      this.band.hidden = true;
      if (this.dragged && at !== null && at !== start) this.zoom(this.from + Math.min(start, at), this.from + Math.max(start, at));
    };
    this.figure.addEventListener('pointerup', end);
    this.figure.addEventListener('pointercancel', () => {
      this.dragStart = null;
      this.band.hidden = true;
    });
    this.figure.addEventListener(
      'click',
      (event) => {
        if (!this.dragged) return;
        this.dragged = false;
        event.preventDefault();
      },
      true,
    );
    // The browser would drag the link away instead.
    this.figure.addEventListener('dragstart', (event) => event.preventDefault());
  }

  private markBand(a: number, b: number): void {
    const points = this.points();
    const left = points[Math.min(a, b)]?.querySelector('rect.hit')?.getBoundingClientRect();
    const right = points[Math.max(a, b)]?.querySelector('rect.hit')?.getBoundingClientRect();
    if (!left || !right) return;
    const frame = this.figure.getBoundingClientRect();
    Object.assign(this.band.style, {
      left: `${left.left - frame.left}px`,
      width: `${right.right - left.left}px`,
      top: `${left.top - frame.top}px`,
      height: `${left.height}px`,
    });
    this.band.hidden = false;
  }
}

function element(tag: string, className: string): HTMLElement {
  const made = document.createElement(tag);
  made.className = className;
  return made;
}

function labelled(control: HTMLSelectElement): HTMLLabelElement {
  const label = document.createElement('label');
  label.append(`${control.getAttribute('aria-label')} `, control);
  return label;
}
