import { api, meta } from './api.ts';
import { labelCells } from './cards.ts';

type Field = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/** A field's value as the API wants it: data-type says how. */
function valueOf(field: Field): unknown {
  const raw = field.value;
  switch (field.dataset.type) {
    case 'number':
      return Number(raw);
    case 'bool':
      return raw === 'true';
    case 'list':
      return [raw];
    case 'end-of-day':
      return new Date(`${raw}T23:59:59Z`).toISOString();
    case 'csv':
      return raw
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
    case 'words':
      return raw
        .split(' ')
        .map((item) => item.trim())
        .filter(Boolean);
    case 'nullable':
      return raw.trim() === '' ? null : raw.trim();
    case 'nullable-number':
      return raw.trim() === '' ? null : Number(raw);
    default:
      return raw;
  }
}

/** The form's fields as the body of its API call; data-optional leaves an empty one out. */
function bodyOf(form: HTMLFormElement): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const element of Array.from(form.elements)) {
    if (!(element instanceof HTMLInputElement || element instanceof HTMLSelectElement || element instanceof HTMLTextAreaElement)) continue;
    const field = element;
    if (!field.name || field.disabled || (field.value === '' && field.dataset.optional !== undefined)) continue;
    if (field instanceof HTMLInputElement && field.type === 'checkbox' && !field.checked) continue;
    // A dotted name is a field of an object: diagnosis.summary.
    const path = field.name.split('.');
    let target = body;
    for (const key of path.slice(0, -1)) target = (target[key] ??= {}) as Record<string, unknown>;
    const key = path[path.length - 1] as string;
    const value = valueOf(field);
    // Fields of one name that are lists add up: tests picked, and test ids typed.
    const before = target[key];
    target[key] = Array.isArray(before) && Array.isArray(value) ? before.concat(value) : value;
  }
  return body;
}

/**
 * The page's parts marked data-refresh, fetched again from the server as it renders them now:
 * what a form made is listed at once, while the secret it showed once stays in the form.
 */
async function refreshLists(): Promise<void> {
  const parts = document.querySelectorAll('[data-refresh][id]');
  if (parts.length === 0) return;
  const response = await fetch(location.href, { credentials: 'same-origin', headers: { accept: 'text/html' } });
  if (!response.ok) return;
  const fresh = new DOMParser().parseFromString(await response.text(), 'text/html');
  for (const part of Array.from(parts)) {
    const now = fresh.getElementById(part.id);
    if (now) part.replaceWith(document.adoptNode(now));
  }
  labelCells(document);
}

interface Answer {
  error?: string | { message?: string };
  data?: { test_run?: { id: number }; project?: { id: number }; invitation?: { url: string }; key?: { key: string } };
}

function problemOf(answer: Answer | null, status: number): string {
  const error = answer?.error;
  return (typeof error === 'string' ? error : error?.message) || `HTTP ${status}`;
}

/** What the form does once its call succeeded: data-then says. */
async function then(form: HTMLFormElement, answer: Answer | null): Promise<void> {
  const data = answer?.data;
  if (form.dataset.then === 'open-run' && data?.test_run) location.href = `/projects/${meta('project-id')}/runs/${data.test_run.id}`;
  else if (form.dataset.then === 'open-project' && data?.project) location.href = `/projects/${data.project.id}/runs`;
  else if (form.dataset.then === 'show-secret' && (data?.invitation || data?.key)) {
    // Shown this once: an invitation's link, or a new key, to copy before leaving the page.
    const shown = form.querySelector('output');
    const input = shown?.querySelector('input');
    if (shown && input) {
      shown.hidden = false;
      input.value = data.invitation ? data.invitation.url : (data.key?.key ?? '');
      input.select();
    }
    await refreshLists();
  } else location.reload();
}

/** The pages' action forms (`form[data-api]`) are sent to the API with the session's CSRF token. */
export function sendActionForms(root: Document): void {
  root.addEventListener('submit', async (event) => {
    const form = event.target instanceof Element ? event.target.closest<HTMLFormElement>('form[data-api]') : null;
    if (!form) return;
    event.preventDefault();
    const [method = 'POST', path = ''] = (form.dataset.api ?? '').split(' ');
    const problem = form.querySelector('[role="alert"]');
    if (problem) problem.textContent = '';
    const button = form.querySelector('button');
    if (button) button.disabled = true;
    try {
      const response = await api(method, path, bodyOf(form));
      const answer = (await response.json().catch(() => null)) as Answer | null;
      if (!response.ok) {
        if (problem) problem.textContent = problemOf(answer, response.status);
        return;
      }
      await then(form, answer);
    } catch (error) {
      if (problem) problem.textContent = `Proctor could not be reached: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      if (button) button.disabled = false;
    }
  });
}
