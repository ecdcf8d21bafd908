import type { ComponentChildren } from 'preact';
import { mayCall } from '../permissions.ts';

// The pages' forms: an action is a form the dashboard's script sends to
// the JSON API (`api`: method and path), its fields the body; a person who may not make the call is
// not offered it, nor the section or fold around it.

export type Then = 'reload' | 'open-run' | 'open-project' | 'show-secret';

/** A form the script sends as `api`; nothing when the page's person may not make the call. */
export function ApiForm(props: { api: string; then: Then; label: string; offered?: boolean; children?: ComponentChildren }) {
  if (!(props.offered ?? mayCall(props.api))) return null;
  return (
    <form class="action" data-api={props.api} data-then={props.then}>
      {props.children}
      <button type="submit">{props.label}</button>
      <span role="alert" class="problem"></span>
      {props.then === 'show-secret' ? (
        // What is shown once (an invitation's link, a new key) appears in the form, to copy.
        <output hidden>
          <label>
            Copy it now: it is shown this once
            <input readonly size={60} />
          </label>
        </output>
      ) : null}
    </form>
  );
}

/**
 * A titled section around the form of `api`; nothing when the person may not make the call (or,
 * `offered` given, when it is false).
 */
export function FormSection(props: { id: string; heading: string; api: string; offered?: boolean; level?: 2 | 3; children: ComponentChildren }) {
  if (!(props.offered ?? mayCall(props.api))) return null;
  const Heading = props.level === 3 ? 'h3' : 'h2';
  return (
    <section class="create" aria-labelledby={props.id}>
      <Heading id={props.id}>{props.heading}</Heading>
      {props.children}
    </section>
  );
}

/** The form of `api` folded under a summary; nothing when the person may not make the call (or `offered` is false). */
export function FoldedForm(props: { kind: string; summary: string; api: string; offered?: boolean; children: ComponentChildren }) {
  if (!(props.offered ?? mayCall(props.api))) return null;
  return (
    <details class={props.kind}>
      <summary>{props.summary}</summary>
      {props.children}
    </details>
  );
}

/** A field: its label, the control inside it (`for` names the control's id when it has one). */
export function Field(props: { for?: string; label: ComponentChildren; children: ComponentChildren }) {
  return (
    <label for={props.for}>
      {props.label}
      {props.children}
    </label>
  );
}

/** A select's options, `value` chosen. */
export function Options(props: { choices: readonly (readonly [string | number, string])[]; value: string | number | undefined }) {
  return (
    <>
      {props.choices.map(([value, label]) => (
        <option value={value} selected={value === props.value}>
          {label}
        </option>
      ))}
    </>
  );
}

/** The window's lengths a list offers, in days. */
export const DAY_CHOICES = [7, 14, 30, 90].map((d) => [d, String(d)] as const);
