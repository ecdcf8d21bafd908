/**
 * On a phone a table is a list of cards (styles/phone.css): each cell is labelled by its column,
 * copied here from the table's head where the page gave the cell no `data-label`. A run's tests
 * (`table.tests`) are laid out by the stylesheet alone.
 */
export function labelCells(root: Document): void {
  for (const table of Array.from(root.querySelectorAll<HTMLTableElement>('table:not(.tests)'))) {
    const heads = Array.from(table.tHead?.rows[0]?.cells ?? []).map((cell) => cell.textContent?.trim() ?? '');
    if (heads.length < 2) continue;
    for (const body of Array.from(table.tBodies)) {
      for (const row of Array.from(body.rows)) {
        Array.from(row.cells).forEach((cell, index) => {
          const label = heads[index];
          if (label && !cell.hasAttribute('data-label')) cell.dataset.label = label;
        });
      }
    }
  }
}
