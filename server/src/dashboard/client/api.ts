/** A `<meta name>`'s content on the page: the project shown, the session's CSRF token. */
export function meta(name: string): string | null {
  return document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? null;
}

/** A call to Proctor's JSON API with the session: the same call, and the same checks, as any API client. */
export function api(method: string, path: string, body?: unknown): Promise<Response> {
  const project = meta('project-id');
  const headers: Record<string, string> = { accept: 'application/json', 'x-csrf-token': meta('csrf-token') ?? '' };
  if (project) headers['x-project-id'] = project;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return fetch(path, { method, credentials: 'same-origin', headers, body: body === undefined ? undefined : JSON.stringify(body) });
}
