/**
 * The header's navigation folds behind a Menu button on a narrow screen. Without the script the
 * navigation shows whole (the stylesheet folds it only under `html.js`).
 */
export function foldNavigation(root: Document): void {
  root.documentElement.classList.add('js');
  const button = root.querySelector<HTMLButtonElement>('button.menu-button');
  const header = button?.closest('header');
  if (!button || !header) return;
  button.hidden = false;
  button.addEventListener('click', () => {
    const open = header.classList.toggle('open');
    button.setAttribute('aria-expanded', String(open));
  });
  root.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && header.classList.contains('open')) {
      header.classList.remove('open');
      button.setAttribute('aria-expanded', 'false');
      button.focus();
    }
  });
}
