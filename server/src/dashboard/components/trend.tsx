import { h, type VNode } from 'preact';
import { type SvgNode, type TrendChart, trendSvg } from '../charts.ts';

// A trend chart on a page: charts.ts draws it as a tree of SVG elements (shared with the browser's
// script, which draws it again to zoom), rendered here as components, so that every label, colour
// and link in it is escaped by Preact like any page's value.

function Svg(props: { node: SvgNode }): VNode {
  const { tag, attrs, children } = props.node;
  return h(tag, attrs, ...children.map((child) => (typeof child === 'string' ? child : <Svg node={child} />)));
}

/**
 * The chart in its figure: the drawing, and the chart's points for the script (which zooms by
 * drawing them again). A figure of no point says so in words.
 */
export function TrendFigure(props: { chart: TrendChart }) {
  const { chart } = props;
  if (chart.points.length === 0) return <p class="empty">{chart.label}: nothing to draw.</p>;
  return (
    <figure class={`trend${chart.small ? ' small' : ''}`} data-chart={JSON.stringify(chart)}>
      <Svg node={trendSvg(chart)} />
    </figure>
  );
}

/** The figure of `chart`, as a page's child. */
export function trendFigure(chart: TrendChart): VNode {
  return <TrendFigure chart={chart} />;
}
