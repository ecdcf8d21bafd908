import { createHmac } from 'node:crypto';

/** How long a receiver may take to answer one attempt. */
const ATTEMPT_TIMEOUT_MS = 10_000;
const USER_AGENT = 'Proctor-Notifications';

export type Sent = { ok: true } | { ok: false; error: string };

/** The header a webhook's receiver checks: the HMAC-SHA256 of the body in hex, as GitHub signs its own webhooks. */
export function signatureOf(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** POSTs a JSON body; any 2xx is delivered. An error says the status and the start of the answer, or why nothing came. */
export async function postJson(url: string, body: string, headers: Record<string, string>): Promise<Sent> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...headers },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    const answer = (await response.text().catch(() => '')).slice(0, 200);
    if (response.status >= 200 && response.status < 300) return { ok: true };
    return { ok: false, error: `HTTP ${response.status}${answer ? `: ${answer}` : ''}` };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { ok: false, error: cause?.code ?? cause?.message ?? (error as Error).message };
  }
}
