import { createRequesterFn, GitbeakerRequestError, GitbeakerTimeoutError, type RequesterType, type ResourceOptions } from '@gitbeaker/requester-utils';

// GitLab's client sends a request again by itself when GitLab answers 502 or 429, up to ten times:
// a POST whose first answer was lost after GitLab made the issue or the note would make it twice.
// The trackers' requests are sent once here, as GitHub's are; the outbox tries again, after it has
// looked for what the lost attempt made (the marker, the comment's key).

async function bodyOf(response: Response): Promise<unknown> {
  if (response.status === 204) return null;
  const type = (response.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
  if (type === 'application/json') return ((await response.json()) as unknown) ?? {};
  return type.startsWith('text/') ? response.text() : response.blob();
}

type Options = Record<string, unknown> & {
  prefixUrl?: string;
  searchParams?: string;
  method?: string;
  rateLimiters?: unknown;
  agent?: unknown;
  asStream?: boolean;
};

async function sendOnce(endpoint: string, options?: Options) {
  const { rateLimiters: _limits, agent: _agent, asStream: _stream, prefixUrl, searchParams, method, ...rest } = options ?? {};
  const url = new URL(endpoint, prefixUrl?.endsWith('/') ? prefixUrl : `${prefixUrl ?? ''}/`);
  url.search = searchParams ?? '';
  const request = new Request(url, { ...(rest as RequestInit), method });
  const response = await fetch(request).catch((error: Error) => {
    if (error.name === 'TimeoutError' || error.name === 'AbortError') throw new GitbeakerTimeoutError('Query timeout was reached');
    throw error;
  });
  if (!response.ok) {
    const content = await response.text();
    let description = content;
    if (response.headers.get('content-type')?.includes('application/json')) {
      const parsed = JSON.parse(content) as { error?: unknown; message?: unknown } | null;
      const said = parsed?.error ?? parsed?.message ?? '';
      description = typeof said === 'string' ? said : JSON.stringify(said);
    }
    // As the client's own errors are: the answer is the error's cause, where its status is read.
    throw new GitbeakerRequestError(description, { cause: { description, request, response } });
  }
  return { body: await bodyOf(response), headers: Object.fromEntries(response.headers.entries()), status: response.status };
}

/** The client's requester, each request sent once. */
export const sendingOnce: (options: ResourceOptions) => RequesterType = createRequesterFn(
  (_, options) => Promise.resolve(options),
  sendOnce as Parameters<typeof createRequesterFn>[1],
);
