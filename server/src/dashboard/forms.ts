import { h } from 'preact';
import { ApiForm, FoldedForm, FormSection, type Then } from './components/forms.tsx';
import { renderHtml, Trusted } from './components/html.ts';
import { mayCall } from './permissions.ts';

// The form pieces of components/forms.tsx as strings, for the pages still built as strings (the
// run page, the sign-in and projects pages): the same components rendered, their fields put in as
// the markup the calling page made.

/**
 * An action is a form the dashboard's script sends to the JSON API (`api`: method and path), its
 * fields the body: the same call, and the same checks, as any API client. The answer's error, if
 * any, shows in the form's alert; on success the page reloads, or opens the run the answer names.
 */
export function apiForm(api: string, then: Then, label: string, fields = '', offered = mayCall(api)): string {
  // trusted: `fields` is markup its page built as a string, escaping each value with escapeXml.
  return renderHtml(h(ApiForm, { api, then, label, offered }, fields ? h(Trusted, { html: fields }) : null));
}

/** A titled section around a form; nothing when the person may not use the form. */
export function formSection(id: string, heading: string, form: string, level: 2 | 3 = 2): string {
  // trusted: `form` is apiForm's markup (a component rendered, its fields escaped by their page).
  return form ? renderHtml(h(FormSection, { id, heading, level, api: '', offered: true, children: h(Trusted, { html: form }) })) : '';
}

/** A form folded under a summary; nothing when the person may not use the form. */
export function foldedForm(kind: string, summary: string, form: string): string {
  // trusted: `form` is apiForm's markup (a component rendered, its fields escaped by their page).
  return form ? renderHtml(h(FoldedForm, { kind, summary, api: '', offered: true, children: h(Trusted, { html: form }) })) : '';
}
