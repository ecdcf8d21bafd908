import { escapeXml as e } from '../xml.ts';
import { mayCall } from './permissions.ts';

/**
 * An action is a form the dashboard's script sends to the JSON API (`api`: method and path), its
 * fields the body: the same call, and the same checks, as any API client. The answer's error, if
 * any, shows in the form's alert; on success the page reloads, or opens the run the answer names.
 */
export function apiForm(api: string, then: 'reload' | 'open-run' | 'open-project' | 'show-secret', label: string, fields = '', offered = mayCall(api)): string {
  // A person who may not make the call is not offered it.
  if (!offered) return '';
  // What is shown once (an invitation's link, a new key) appears in the form, to copy.
  const secret = then === 'show-secret' ? '<output hidden><label>Copy it now: it is shown this once<input readonly size="60"></label></output>' : '';
  return `<form class="action" data-api="${e(api)}" data-then="${then}">${fields}<button type="submit">${e(label)}</button><span role="alert" class="problem"></span>${secret}</form>`;
}

/** A titled section around a form; nothing when the person may not use the form. */
export function formSection(id: string, heading: string, form: string, level: 2 | 3 = 2): string {
  return form ? `<section class="create" aria-labelledby="${id}"><h${level} id="${id}">${e(heading)}</h${level}>${form}</section>` : '';
}

/** A form folded under a summary; nothing when the person may not use the form. */
export function foldedForm(kind: string, summary: string, form: string): string {
  return form ? `<details class="${kind}"><summary>${e(summary)}</summary>${form}</details>` : '';
}
