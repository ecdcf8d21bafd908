import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { receiverAddress, ReceiverRefusedError, type ReceiverPolicy, type ResolvedAddress } from './addresses.ts';

/** How long a receiver may take to answer one attempt. */
const ATTEMPT_TIMEOUT_MS = 10_000;
const USER_AGENT = 'Proctor-Notifications';

export type Sent = { ok: true } | { ok: false; error: string; permanent: boolean };

/** The connection goes to the address that was checked, whatever the name would resolve to now. */
export function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (error: null, addresses: ResolvedAddress[]) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
}

/**
 * The words kept in a delivery's `last_error`: a status and Proctor's reason, never the receiver's
 * answer. A closed port, a filtered one and a host that does not answer read the same.
 */
const NO_CONNECTION = 'no answer from the receiver (the connection failed or timed out)';

function answeredWith(status: number): Sent {
  if (status >= 200 && status < 300) return { ok: true };
  const reason = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
  return { ok: false, error: `the receiver answered HTTP ${status}${reason}`, permanent: false };
}

/**
 * POSTs a JSON body to a receiver a project admin chose: its address checked and pinned, no
 * redirect followed, its answer read off and dropped; any 2xx is delivered.
 */
export async function postToReceiver(url: string, body: string, headers: Record<string, string>, policy: ReceiverPolicy): Promise<Sent> {
  const target = new URL(url);
  let pinned: ResolvedAddress;
  try {
    pinned = await receiverAddress(target, policy);
  } catch (error) {
    if (error instanceof ReceiverRefusedError) return { ok: false, error: error.message, permanent: error.permanent };
    throw error;
  }
  const transport = target.protocol === 'https:' ? https : http;
  return new Promise<Sent>((resolve) => {
    const request = transport.request(
      target,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': USER_AGENT, ...headers },
        lookup: pinnedLookup(pinned),
        agent: false,
      },
      (response) => {
        // Nothing of the answer is kept: read off so that the connection can close.
        response.resume();
        response.once('end', () => resolve(answeredWith(response.statusCode ?? 0)));
        response.once('error', () => resolve(answeredWith(response.statusCode ?? 0)));
      },
    );
    // The whole attempt, answer included, within its time: a receiver trickling bytes holds no worker.
    const deadline = setTimeout(() => request.destroy(new Error('timed out')), ATTEMPT_TIMEOUT_MS);
    request.once('close', () => clearTimeout(deadline));
    request.once('error', () => resolve({ ok: false, error: NO_CONNECTION, permanent: false }));
    request.end(body);
  });
}
