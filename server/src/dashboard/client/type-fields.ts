/**
 * In a form with a `<select data-shows-fields>`, the fields marked `data-types="a b"` are shown,
 * and sent, only while one of their types is chosen. Without the script every field shows, each
 * label naming its types, and the server checks which fields the chosen type takes.
 */
export function showFieldsOfChosenType(root: Document): void {
  for (const select of Array.from(root.querySelectorAll<HTMLSelectElement>('select[data-shows-fields]'))) {
    const form = select.form;
    if (!form) continue;
    select.addEventListener('change', () => {
      for (const field of Array.from(form.querySelectorAll<HTMLElement>('[data-types]'))) {
        const shown = (field.dataset.types ?? '').split(' ').includes(select.value);
        field.hidden = !shown;
        // A hidden field is not sent: the action forms leave disabled fields out of the body.
        for (const input of Array.from(field.querySelectorAll<HTMLInputElement | HTMLSelectElement>('input, select'))) input.disabled = !shown;
      }
    });
    select.dispatchEvent(new Event('change'));
  }
}
