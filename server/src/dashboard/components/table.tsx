import type { ComponentChildren } from 'preact';

/**
 * A table with a heading row (each a column header) and its rows; `scroll` wraps it in a box that
 * scrolls sideways on its own, so that a wide table never widens the page.
 */
export function Table(props: { class?: string; head: string[]; scroll?: boolean; children: ComponentChildren }) {
  const table = (
    <table class={props.class}>
      <thead>
        <tr>
          {props.head.map((name) => (
            <th scope="col">{name}</th>
          ))}
        </tr>
      </thead>
      <tbody>{props.children}</tbody>
    </table>
  );
  return props.scroll ? <div class="scroll">{table}</div> : table;
}

/** A list's empty state: what there is not, in words. */
export function Empty(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

/**
 * Tabs over one list (`all · open · resolved`): the current one in bold and marked current, the
 * others links.
 */
export function Tabs(props: { label: string; tabs: { name: string; href: string; current: boolean }[] }) {
  return (
    <nav aria-label={props.label}>
      <p>
        {props.tabs.map((tab, i) => (
          <>
            {i > 0 ? ' · ' : null}
            {tab.current ? <strong aria-current="page">{tab.name}</strong> : <a href={tab.href}>{tab.name}</a>}
          </>
        ))}
      </p>
    </nav>
  );
}
