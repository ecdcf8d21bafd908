import type { ComponentChildren, VNode } from 'preact';
import { jsxTemplate } from 'preact/jsx-runtime';
import { renderToStaticMarkup } from 'preact-render-to-string';

// The dashboard's pages are Preact components rendered to a string on the server (no client
// framework: the page's script is client/, docs/decisions/server-jsx.md). Text and attribute values
// are escaped by the renderer; markup made elsewhere enters a page only through `Trusted`, and every
// use of it says why that markup is safe (the lint rule proctor/trusted-html holds them to it).

/**
 * Markup already escaped by the code that made it, put in as it is, with no wrapping element. No
 * page uses it now (every page and chart is components); it stays the one door, checked by lint.
 */
export function Trusted(props: { html: string }): VNode {
  return jsxTemplate([props.html]) as VNode;
}

/** A component tree as HTML. */
export function renderHtml(node: VNode<any>): string {
  return renderToStaticMarkup(node);
}

/** Items separated by `separator` (text), as children: `a · b · c`. */
export function joined(items: ComponentChildren[], separator: string): ComponentChildren[] {
  return items.flatMap((item, i) => (i === 0 ? [item] : [separator, item]));
}
