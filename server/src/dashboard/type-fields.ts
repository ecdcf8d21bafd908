/**
 * Runs in the browser, as part of the dashboard's script (assets.ts serves its source): in a form
 * with a `<select data-shows-fields>`, the fields marked `data-types="a b"` are shown, and sent,
 * only while one of their types is chosen. Without the script every field shows, each label
 * naming its types, and the server checks which fields the chosen type takes.
 *
 * Written in TypeScript to be type-checked and linted with the rest; its source is served as it
 * compiles, so it uses no import and no named function inside it (a transform that keeps names
 * would call a helper the browser lacks).
 */
export function showFieldsOfChosenType(root: Document): void {
  for (const select of root.querySelectorAll<HTMLSelectElement>('select[data-shows-fields]')) {
    const form = select.form;
    if (!form) continue;
    select.addEventListener('change', () => {
      for (const field of form.querySelectorAll<HTMLElement>('[data-types]')) {
        const shown = (field.dataset.types ?? '').split(' ').includes(select.value);
        field.hidden = !shown;
        // A hidden field is not sent: the dashboard's script leaves disabled fields out of the body.
        for (const input of field.querySelectorAll<HTMLInputElement | HTMLSelectElement>('input, select')) input.disabled = !shown;
      }
    });
    select.dispatchEvent(new Event('change'));
  }
}
