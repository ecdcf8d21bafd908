/** A small JSON client for one server and key. */
export function client(baseUrl: string, key?: string, extraHeaders: Record<string, string> = {}) {
  const request = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...extraHeaders,
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    return { status: response.status, body: json, text, headers: response.headers };
  };
  return {
    get: (path: string, headers?: Record<string, string>) => request('GET', path, undefined, headers),
    post: (path: string, body?: unknown, headers?: Record<string, string>) => request('POST', path, body ?? {}, headers),
    put: (path: string, body?: unknown, headers?: Record<string, string>) => request('PUT', path, body ?? {}, headers),
    patch: (path: string, body?: unknown, headers?: Record<string, string>) => request('PATCH', path, body ?? {}, headers),
    delete: (path: string, headers?: Record<string, string>) => request('DELETE', path, undefined, headers),
    request,
  };
}
