import { createHmac } from 'node:crypto';
import type { NotifySettings } from '../config.ts';
import type { Clock } from '../context.ts';
import type { Sql, Tx } from '../db.ts';
import { composeDigest } from '../digests/index.ts';
import { composeStory, type RunStory } from './compose.ts';
import { type DigestStory, emailDigest, slackDigest, teamsDigest } from './digest-messages.ts';
import { routedFailures } from './routing.ts';
import { digestTargetOf, digestToCompose, keepDigestPayload } from './rules-store.ts';
import { digestAsOf } from './schedule.ts';
import { refusedAtDelivery } from './credentials.ts';
import { tellGitHub } from './github.ts';
import { tellGitLab } from './gitlab.ts';
import { MailError, type Mailer } from '../mail/index.ts';
import { type EmailMessage, emailMessage, slackMessage, teamsMessage, webhookEvent } from './messages.ts';
import { type DueDelivery, keepPayload, markAttemptFailed, markDelivered, markStepDone, takeDue } from './store.ts';
import type { ReceiverPolicy } from '../outbound/addresses.ts';
import { postToReceiver } from '../outbound/receiver.ts';
import { postSlackMessage } from './slack-api.ts';
import { outboxDeliveries } from '../metrics.ts';

export interface NotifyDeps {
  sql: Sql;
  clock: Clock;
  settings: NotifySettings;
  /** Where Slack, Teams and webhook receivers may be, and how their names resolve. */
  receivers: ReceiverPolicy;
  /** Sends email destinations' mail; null: the server sends no mail (no PROCTOR_SMTP_URL). */
  mailer: Mailer | null;
  /** The run page's link, for people to open from the message. */
  runUrl: (runId: number) => string;
  /** A dashboard page's link (a path such as /projects/1/digest), for a digest's links. */
  pageUrl: (path: string) => string;
}

const FIRST_RETRY_MS = 2000;
const LONGEST_WAIT_MS = 5 * 60_000;

/** Waits of 2, 4, 8 … seconds between attempts, never more than 5 minutes. */
export function retryDelayMs(attempts: number): number {
  return Math.min(LONGEST_WAIT_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));
}

/**
 * Sends the next delivery due, held (row lock) while it is sent: a process killed meanwhile leaves
 * it pending, to be sent again with the same event id. The payload is composed at the first
 * attempt and kept, so that every attempt sends the same event. Returns false when none is due.
 */
export async function deliverNext(deps: NotifyDeps): Promise<boolean> {
  await composeNextDigest(deps);
  let outcome: 'delivered' | 'retry' | 'failed' | null = null;
  const delivered = await deps.sql.begin(async (tx) => {
    const now = deps.clock();
    const due = await takeDue(tx, now);
    if (!due) return false;
    let payload = due.payload;
    // A digest is composed before, outside this transaction (composeNextDigest): one queued since is composed at the next turn.
    if (payload === null && due.kind === 'digest') return false;
    if (payload === null) {
      payload = await composePayload(tx, due, deps);
      await keepPayload(tx, due.id, payload);
    }
    const sent = await attempt(tx, due, payload, deps);
    if (sent.ok) {
      await markDelivered(tx, due.id, deps.clock());
      outcome = 'delivered';
      return true;
    }
    const attempts = due.attempts + 1;
    // Slack's Retry-After (a 429 or `ratelimited`) says when to try again; otherwise the doubling waits.
    const retryAt = new Date(deps.clock().getTime() + Math.max(retryDelayMs(attempts), sent.retryAfterMs ?? 0));
    const givenUp = sent.permanent || retryAt.getTime() - due.created_at.getTime() > deps.settings.retryMs;
    await markAttemptFailed(tx, due.id, sent.error, givenUp ? null : retryAt);
    outcome = givenUp ? 'failed' : 'retry';
    return true;
  });
  // Counted once the attempt's outcome is committed.
  if (outcome) outboxDeliveries.inc({ outcome });
  return delivered;
}

async function composePayload(tx: Tx, due: DueDelivery, deps: NotifyDeps): Promise<string> {
  if (due.test_run_id === null) throw new Error(`delivery ${due.id} of kind ${due.kind} has no run`);
  const story = await composeStory(tx, due.test_run_id, deps.runUrl, deps.pageUrl);
  if (due.kind === 'owners') {
    const owners = due.owners ?? [];
    const routed = { ...story, failures: routedFailures(story.failures, owners), mention: null };
    if (due.destination.type === 'email') return JSON.stringify(emailMessage(routed, owners));
    if (due.destination.type === 'teams') return JSON.stringify(teamsMessage(routed, owners));
    if (due.destination.type === 'slack') return JSON.stringify(slackMessage(routed, owners));
    throw new Error(`an owners delivery to a ${due.destination.type} destination`);
  }
  // GitHub's and GitLab's requests are made from the story at each attempt: the request and its comment may have changed.
  if (due.destination.type === 'github' || due.destination.type === 'gitlab') return JSON.stringify(story);
  if (due.destination.type === 'email') return JSON.stringify(emailMessage(story));
  if (due.destination.type === 'teams') return JSON.stringify(teamsMessage(story));
  return JSON.stringify(due.destination.type === 'slack' ? slackMessage(story) : webhookEvent(story, due.event_id, due.created_at));
}

/**
 * The next digest due without its payload: composed as of the end of the UTC day before it was
 * due (whole days, over) and kept, before the delivery is taken. Outside any transaction: a digest
 * reads much of the database, and the embedded database (one session at a time) would wait on a
 * transaction held meanwhile.
 */
async function composeNextDigest(deps: NotifyDeps): Promise<void> {
  const due = await digestToCompose(deps.sql, deps.clock());
  if (!due) return;
  const target = await digestTargetOf(deps.sql, due.digest_subscription_id);
  if (!target) return;
  const digest = await composeDigest(
    deps.sql,
    target.project_id,
    { id: target.environment_id, name: target.environment_name },
    target.period,
    digestAsOf(due.due_at),
  );
  const project = `/projects/${target.project_id}`;
  const story: DigestStory = {
    project_name: target.project_name,
    digest,
    links: {
      page: deps.pageUrl(`${project}/digest?environment_id=${target.environment_id}&period=${target.period}`),
      test: (id) => deps.pageUrl(`${project}/tests/${encodeURIComponent(id)}`),
      group: (id) => deps.pageUrl(`${project}/failure-groups/${encodeURIComponent(id)}`),
      run: (id) => deps.pageUrl(`${project}/runs/${id}`),
    },
  };
  // Only Slack, Teams and email destinations take digests (checked when subscribed); another type's gets the mail's shape and fails as its type would.
  const payload = due.type === 'teams' ? teamsDigest(story) : due.type === 'slack' ? slackDigest(story) : emailDigest(story);
  await keepDigestPayload(deps.sql, due.id, JSON.stringify(payload));
}

type Attempt = { ok: true } | { ok: false; error: string; permanent: boolean; retryAfterMs?: number };

async function attempt(tx: Tx, due: DueDelivery, payload: string, deps: NotifyDeps): Promise<Attempt> {
  const { destination } = due;
  // The server's App or GitLab token on a repository not bound to the project: nothing is sent, and it will not change by retrying.
  const refused = await refusedAtDelivery(tx, destination, deps.settings);
  if (refused) return { ok: false, error: refused, permanent: true };
  if (destination.type === 'github' || destination.type === 'gitlab') {
    const progress = { done: new Set(due.steps_done), mark: (step: string) => markStepDone(tx, due.id, step) };
    const tell = destination.type === 'github' ? tellGitHub : tellGitLab;
    return tell(tx, destination, JSON.parse(payload) as RunStory, deps.settings, progress);
  }
  if (destination.type === 'email') return mail(destination.recipients, JSON.parse(payload) as EmailMessage, deps.mailer);
  if (destination.type === 'slack' && destination.channel !== null) return postSlackMessage(destination, payload, deps.settings.slackApiUrl, deps.receivers);
  return post(due, payload, deps.receivers);
}

/** An email destination: one mail to its recipients; a 5xx answer of the SMTP server is not tried again. */
async function mail(recipients: string[] | null, message: EmailMessage, mailer: Mailer | null): Promise<Attempt> {
  if (mailer === null) return { ok: false, error: 'not sent: this server sends no mail (PROCTOR_SMTP_URL is not set)', permanent: true };
  if (recipients === null || recipients.length === 0) return { ok: false, error: 'an email destination without recipients', permanent: true };
  try {
    await mailer.send({ to: recipients, ...message });
    return { ok: true };
  } catch (error) {
    if (!(error instanceof MailError)) throw error;
    return { ok: false, error: `the SMTP server ${mailer.server} did not take the mail: ${error.message}`, permanent: error.permanent };
  }
}

/** The header a webhook's receiver checks: the HMAC-SHA256 of the body in hex, as GitHub signs its own webhooks. */
export function signatureOf(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Slack, Teams and webhooks: one POST of the payload, a webhook's signed. */
async function post(due: DueDelivery, body: string, receivers: ReceiverPolicy): Promise<Attempt> {
  const { destination } = due;
  if (destination.url === null) return { ok: false, error: `a ${destination.type} destination without a URL`, permanent: true };
  const headers: Record<string, string> =
    destination.type === 'webhook'
      ? {
          'x-proctor-event': 'test_run.ended',
          'x-proctor-delivery': due.event_id,
          'x-proctor-timestamp': String(Math.floor(due.created_at.getTime() / 1000)),
          ...(destination.secret ? { 'x-proctor-signature-256': signatureOf(destination.secret, body) } : {}),
        }
      : {};
  return postToReceiver(destination.url, body, headers, receivers);
}
