import { type ReceiverPolicy, ReceiverRefusedError } from '../outbound/addresses.ts';
import { pinnedAgent, requestPinned } from '../outbound/pinned.ts';
import type { StoredDestination } from './store.ts';

// A Slack destination by bot token: the message Slack's incoming webhook would take (text and
// blocks), posted with chat.postMessage to a channel id or a user id (the app's direct message
// with that person), the token as `Authorization: Bearer`. Slack's Web API is reached under the
// receivers' outbound rules (PROCTOR_NOTIFY_ALLOW_HOSTS), as every destination is.

export type SlackSent = { ok: true } | { ok: false; error: string; permanent: boolean; retryAfterMs?: number };

/**
 * Slack's errors that a later try may not meet: its own trouble, which its documentation of
 * chat.postMessage says to retry. Every other code (a revoked token, an unknown channel, a message
 * Slack will not take as it is) needs a person to change something first: the delivery fails at
 * once with it rather than retrying for hours.
 */
const TRANSIENT = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);

/** Retry-After in seconds (Slack sends seconds), as milliseconds; undefined when absent or unreadable. */
function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds * 1000) : undefined;
}

/**
 * One chat.postMessage of the message to the destination's channel. Slack answers 200 with
 * `ok: false` and an error code on failures: the code is kept as the delivery's reason, never the
 * token nor the rest of the answer.
 */
export async function postSlackMessage(destination: StoredDestination, payload: string, apiUrl: string, receivers: ReceiverPolicy): Promise<SlackSent> {
  if (destination.channel === null || destination.token === null)
    return { ok: false, error: 'a slack destination by bot token without its channel or token', permanent: true };
  const url = new URL(`${apiUrl}/chat.postMessage`);
  const body = JSON.stringify({ ...(JSON.parse(payload) as Record<string, unknown>), channel: destination.channel, unfurl_links: false });
  let answer;
  try {
    const agent = await pinnedAgent(url, receivers);
    answer = await requestPinned(url, agent, {
      method: 'POST',
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'content-length': String(Buffer.byteLength(body)),
        authorization: `Bearer ${destination.token}`,
        'user-agent': 'Proctor-Notifications',
      },
      body,
    });
  } catch (error) {
    if (error instanceof ReceiverRefusedError) return { ok: false, error: `Slack: ${error.message}`, permanent: error.permanent };
    return { ok: false, error: "no answer from Slack's Web API (the connection failed or timed out)", permanent: false };
  }
  if (answer.status === 429) return { ok: false, error: 'Slack: ratelimited (HTTP 429)', permanent: false, retryAfterMs: retryAfterMs(answer.retryAfter) };
  if (answer.status >= 500) return { ok: false, error: `Slack answered HTTP ${answer.status}`, permanent: false };
  if (answer.status !== 200) return { ok: false, error: `Slack answered HTTP ${answer.status}`, permanent: answer.status >= 400 };
  let parsed: { ok?: unknown; error?: unknown };
  try {
    parsed = JSON.parse(answer.text) as { ok?: unknown; error?: unknown };
  } catch {
    return { ok: false, error: 'Slack answered something other than JSON', permanent: false };
  }
  if (parsed.ok === true) return { ok: true };
  // Slack's error codes are short snake_case words: anything else is not shown.
  const code = typeof parsed.error === 'string' && /^[a-z_]{1,64}$/.test(parsed.error) ? parsed.error : 'unknown_error';
  if (code === 'ratelimited' || code === 'rate_limited')
    return { ok: false, error: 'Slack: ratelimited', permanent: false, retryAfterMs: retryAfterMs(answer.retryAfter) };
  return { ok: false, error: `Slack refused the message: ${code}`, permanent: !TRANSIENT.has(code) };
}
