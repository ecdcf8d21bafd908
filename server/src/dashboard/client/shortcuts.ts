/**
 * The keyboard: `/` goes to the project's search box, `j` and `k` move over the rows of the page's
 * list (a row is a table row or a list item holding a link; the focus goes to its first link, so
 * Enter opens it), `?` shows the shortcuts. No key is taken while a person types in a field.
 */
const ROWS = 'main table tbody tr, main ul.rows > li';

function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

function rowsOf(root: Document): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(ROWS)].filter((row) => row.querySelector('a[href]') !== null && row.offsetParent !== null);
}

function moveRow(root: Document, step: 1 | -1): void {
  const rows = rowsOf(root);
  if (rows.length === 0) return;
  const current = rows.findIndex((row) => row.classList.contains('kb-current'));
  const next = current === -1 ? (step === 1 ? 0 : rows.length - 1) : Math.min(rows.length - 1, Math.max(0, current + step));
  rows[current]?.classList.remove('kb-current');
  const row = rows[next] as HTMLElement;
  row.classList.add('kb-current');
  row.querySelector<HTMLAnchorElement>('a[href]')?.focus();
  row.scrollIntoView({ block: 'nearest' });
}

export function bindShortcuts(root: Document): void {
  const dialog = root.querySelector<HTMLDialogElement>('dialog#shortcuts');
  root.addEventListener('keydown', (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    if (dialog?.open) return;
    if (event.key === '/') {
      const search = root.querySelector<HTMLInputElement>('form.search input[name="q"]');
      if (!search) return;
      event.preventDefault();
      // On a phone the box is in the folded menu: unfold it first.
      const header = search.closest('header');
      if (header && search.offsetParent === null) header.querySelector<HTMLButtonElement>('button.menu-button')?.click();
      search.focus();
      search.select();
    } else if (event.key === '?') {
      if (!dialog) return;
      event.preventDefault();
      dialog.showModal();
    } else if (event.key === 'j' || event.key === 'k') {
      moveRow(root, event.key === 'j' ? 1 : -1);
    }
  });
}
