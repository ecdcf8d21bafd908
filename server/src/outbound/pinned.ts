import http from 'node:http';
import https from 'node:https';
import { receiverAddress, type ReceiverPolicy } from './addresses.ts';
import { pinnedLookup } from './receiver.ts';

// A tracker a project admin names (a Jira site, Linear's API) is reached as a receiver is: its
// address resolved and checked once (PROCTOR_NOTIFY_ALLOW_HOSTS for a private one), every
// connection then made to that address whatever the name resolves to later, no redirect followed.

/** How long a tracker may take to answer one request. */
export const TRACKER_TIMEOUT_MS = 15_000;

/** An agent whose connections all go to the address checked for `url`; a ReceiverRefusedError when it is forbidden. */
export async function pinnedAgent(url: URL, policy: ReceiverPolicy): Promise<http.Agent> {
  const pinned = await receiverAddress(url, policy);
  const options = { lookup: pinnedLookup(pinned), keepAlive: false };
  return url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
}

export interface PinnedAnswer {
  status: number;
  contentType: string;
  /** The Retry-After header, as sent; null without one. */
  retryAfter: string | null;
  text: string;
}

/** One request through a pinned agent, its answer read whole (a tracker's JSON); redirects are answers, not followed. */
export function requestPinned(url: URL, agent: http.Agent, init: { method: string; headers: Record<string, string>; body?: string }): Promise<PinnedAnswer> {
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = transport.request(url, { method: init.method, headers: init.headers, agent, timeout: TRACKER_TIMEOUT_MS }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          contentType: String(response.headers['content-type'] ?? ''),
          retryAfter: response.headers['retry-after'] ?? null,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      response.once('error', reject);
    });
    request.once('timeout', () => request.destroy(new Error('timed out')));
    request.once('error', reject);
    request.end(init.body);
  });
}
