import { showFieldsOfChosenType } from './type-fields.ts';

/**
 * The dashboard's one script, served by Proctor (no CDN). It keeps what is under way fresh (a list
 * of runs, a run) by asking the API with the session, and sends the pages' action forms to the
 * API with the session's CSRF token: the same calls, and the same checks, as any API client.
 */
export const DASHBOARD_SCRIPT = `
(() => {
  const meta = (name) => document.querySelector('meta[name="' + name + '"]')?.getAttribute('content');
  const project = meta('project-id');
  const api = (method, path, body) =>
    fetch(path, {
      method,
      credentials: 'same-origin',
      headers: { accept: 'application/json', ...(project ? { 'x-project-id': project } : {}), 'x-csrf-token': meta('csrf-token'), ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });

  /** Polls until what is shown changed, then reloads the page. */
  const watch = (read, shown) => {
    const poll = async () => {
      try {
        const response = await api('GET', read.url);
        if (response.ok && read.fingerprint(await response.json()) !== shown) return location.reload();
      } catch (error) { /* the next poll tries again */ }
      setTimeout(poll, 2000);
    };
    setTimeout(poll, 2000);
  };
  const list = document.querySelector('[data-live-url]');
  if (list) {
    watch({ url: list.getAttribute('data-live-url'), fingerprint: (body) => body.data.test_runs.map((r) => r.id + ':' + r.state + ':' + r.total_count).join(',') }, list.getAttribute('data-fingerprint'));
  }
  const run = document.querySelector('[data-live-run]');
  if (run) {
    watch({ url: '/api/test-runs/' + run.getAttribute('data-live-run'), fingerprint: (body) => body.data.test_run.testRun.state }, run.getAttribute('data-state'));
  }

  /** A field's value as the API wants it: data-type says how, data-optional leaves an empty one out. */
  const valueOf = (field) => {
    const raw = field.value;
    switch (field.dataset.type) {
      case 'number': return Number(raw);
      case 'bool': return raw === 'true';
      case 'list': return [raw];
      case 'end-of-day': return new Date(raw + 'T23:59:59Z').toISOString();
      case 'csv': return raw.split(',').map((item) => item.trim()).filter(Boolean);
      case 'words': return raw.split(' ').map((item) => item.trim()).filter(Boolean);
      case 'nullable': return raw.trim() === '' ? null : raw.trim();
      default: return raw;
    }
  };
  /**
   * The page's parts marked data-refresh, fetched again from the server as it renders them now:
   * what a form made is listed at once, while the secret it showed once stays in the form.
   */
  const refreshLists = async () => {
    const parts = document.querySelectorAll('[data-refresh][id]');
    if (parts.length === 0) return;
    const response = await fetch(location.href, { credentials: 'same-origin', headers: { accept: 'text/html' } });
    if (!response.ok) return;
    const fresh = new DOMParser().parseFromString(await response.text(), 'text/html');
    for (const part of parts) {
      const now = fresh.getElementById(part.id);
      if (now) part.replaceWith(document.adoptNode(now));
    }
  };
  document.addEventListener('submit', async (event) => {
    const form = event.target.closest('form[data-api]');
    if (!form) return;
    event.preventDefault();
    const [method, path] = form.dataset.api.split(' ');
    const body = {};
    for (const field of form.elements) {
      if (!field.name || field.disabled || (field.value === '' && field.dataset.optional !== undefined)) continue;
      if (field.type === 'checkbox' && !field.checked) continue;
      // A dotted name is a field of an object: diagnosis.summary.
      const path = field.name.split('.');
      let target = body;
      for (const key of path.slice(0, -1)) target = target[key] ??= {};
      const key = path[path.length - 1];
      const value = valueOf(field);
      // Fields of one name that are lists add up: tests picked, and test ids typed.
      target[key] = Array.isArray(target[key]) && Array.isArray(value) ? target[key].concat(value) : value;
    }
    const problem = form.querySelector('[role="alert"]');
    problem.textContent = '';
    const button = form.querySelector('button');
    button.disabled = true;
    try {
      const response = await api(method, path, body);
      const answer = await response.json().catch(() => null);
      if (!response.ok) {
        problem.textContent = (answer && (answer.error?.message ?? answer.error)) || 'HTTP ' + response.status;
        return;
      }
      if (form.dataset.then === 'open-run') location.href = '/projects/' + project + '/runs/' + answer.data.test_run.id;
      else if (form.dataset.then === 'open-project') location.href = '/projects/' + answer.data.project.id + '/runs';
      else if (form.dataset.then === 'show-secret' && (answer.data.invitation || answer.data.key)) {
        // Shown this once: an invitation's link, or a new key, to copy before leaving the page.
        const shown = form.querySelector('output');
        shown.hidden = false;
        shown.querySelector('input').value = answer.data.invitation ? answer.data.invitation.url : answer.data.key.key;
        shown.querySelector('input').select();
        await refreshLists();
      } else location.reload();
    } catch (error) {
      problem.textContent = 'Proctor could not be reached: ' + error.message;
    } finally {
      button.disabled = false;
    }
  });

  (${showFieldsOfChosenType.toString()})(document);
})();
`;
