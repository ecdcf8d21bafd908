import type { Page } from '@playwright/test';

/** What a page's layout shows wrong on a screen, read from the layout (never from pixels). */
export interface LayoutProblems {
  /** The page is wider than the window: it scrolls sideways. */
  overflow: { scrollWidth: number; innerWidth: number } | null;
  /** Table cells laid out as a column narrower than `minColumn`, with their text. */
  narrowColumns: { text: string; width: number }[];
  /** Words broken across lines though they fit their line, with the width of the line they are in. */
  brokenWords: { word: string; width: number; line: number }[];
}

/**
 * Reads the page's layout: its width against the window's, the width of each table cell that holds
 * text and is laid out as a column (a cell of a card is not), and each word (between spaces) that
 * fits the box its line is in but is drawn with a run of its letters and digits on two lines.
 */
export function layoutProblems(page: Page, minColumn: number): Promise<LayoutProblems> {
  return page.evaluate((min) => {
    const root = document.documentElement;
    const overflow = root.scrollWidth > window.innerWidth ? { scrollWidth: root.scrollWidth, innerWidth: window.innerWidth } : null;
    const narrowColumns: { text: string; width: number }[] = [];
    for (const cell of Array.from(document.querySelectorAll<HTMLTableCellElement>('td, th'))) {
      const text = cell.innerText.trim();
      const width = cell.getBoundingClientRect().width;
      if (text === '' || width === 0 || getComputedStyle(cell).display !== 'table-cell') continue;
      // A table's head hidden but for screen readers (a phone's cards) is no column.
      if ((cell.closest('thead')?.getBoundingClientRect().width ?? 2) <= 1) continue;
      if (width < min) narrowColumns.push({ text: text.slice(0, 60), width: Math.round(width) });
    }
    const brokenWords: { word: string; width: number; line: number }[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent || parent.closest('svg, script, style, [hidden]') || parent.getClientRects().length === 0) continue;
      // The box the word's lines are laid in: the nearest block, less its padding.
      let block: HTMLElement = parent;
      while (block.parentElement && getComputedStyle(block).display.startsWith('inline')) block = block.parentElement;
      const style = getComputedStyle(block);
      const line = block.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      const text = node.textContent ?? '';
      const rectsOf = (start: number, end: number) => {
        const range = document.createRange();
        range.setStart(node as Text, start);
        range.setEnd(node as Text, end);
        return Array.from(range.getClientRects()).filter((rect) => rect.width > 0);
      };
      // A word between spaces longer than its line may break anywhere; one that fits may break
      // only between its parts (after a hyphen, a slash), never inside a run of letters and digits.
      for (const token of text.matchAll(/\S{2,}/g)) {
        const width = rectsOf(token.index, token.index + token[0].length).reduce((sum, rect) => sum + rect.width, 0);
        if (width > line) continue;
        for (const part of token[0].matchAll(/[\p{L}\p{N}_]{2,}/gu)) {
          const start = token.index + part.index;
          const tops = new Set(rectsOf(start, start + part[0].length).map((rect) => Math.round(rect.top)));
          if (tops.size > 1) brokenWords.push({ word: token[0].slice(0, 40), width: Math.round(width), line: Math.round(line) });
        }
      }
    }
    return { overflow, narrowColumns, brokenWords };
  }, minColumn);
}

/** The tops of the header's navigation links shown now, rounded: one value when they sit on one line. */
export function navigationLines(page: Page): Promise<number[]> {
  return page.evaluate(() => {
    const links = Array.from(document.querySelectorAll<HTMLElement>('nav.main > a, nav.main .sections > a, nav.main summary'));
    return [...new Set(links.filter((link) => link.getClientRects().length > 0).map((link) => Math.round(link.getBoundingClientRect().top)))];
  });
}
