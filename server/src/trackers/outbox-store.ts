import { randomUUID } from 'node:crypto';
import type { Tx } from '../db.ts';
import { destinationColumns, type StoredDestination } from '../notifications/index.ts';
import type { ActionKind } from './schema.ts';
import { type LinkRow, type SettingsRow, settingsColumns } from './store.ts';

// The one module that writes `tracker_actions` (the trackers' outbox) and `tracker_follow_queue`
// (the runs whose outcomes move the links, once they are rolled up).

/** What an action posts, composed when it is queued. */
export interface ActionPayload {
  /** The issue to create (`create`). */
  title?: string;
  body?: string;
  /** The comment to post (`failing`, `passing`): its key's marker is added when it is sent. */
  comment?: string;
  /** `failing`: a closed issue is reopened (else only commented on, once per closing). `passing`: the issue is closed. */
  reopen?: boolean;
  close?: boolean;
}

/**
 * Queues an action on the link's issue, due now; none when the link's newest waiting action is of
 * its kind (a second failure while the first's check waits says nothing new). The link is locked
 * first: its actions are numbered in the order their transactions commit, the order they are sent
 * in. Answers whether it was queued.
 */
export async function queueAction(
  sql: Tx,
  link: Pick<LinkRow, 'id' | 'project_id'>,
  kind: ActionKind,
  payload: ActionPayload,
  runId: number | null,
  now: Date,
): Promise<boolean> {
  await sql`select 1 from tracker_links where id = ${link.id} for update`;
  const [newest] = await sql<{ kind: ActionKind }[]>`
    select kind from tracker_actions where link_id = ${link.id} and state = 'pending' order by id desc limit 1`;
  if (newest?.kind === kind) return false;
  await sql`
    insert into tracker_actions (project_id, link_id, kind, key, test_run_id, payload, next_attempt_at, created_at)
    values (${link.project_id}, ${link.id}, ${kind}, ${randomUUID()}, ${runId}, ${sql.json(payload as Record<string, string | boolean>)}, ${now}, ${now})`;
  return true;
}

export interface DueAction {
  id: number;
  kind: ActionKind;
  key: string;
  payload: ActionPayload;
  attempts: number;
  steps_done: string[];
  created_at: Date;
  link: Pick<LinkRow, 'id' | 'project_id' | 'tracker' | 'marker' | 'issue_key' | 'issue_url' | 'issue_state' | 'noted_closed_at'>;
  /** GitHub's and GitLab's: the destination the issue lives on. */
  destination: StoredDestination | null;
  /** Jira's and Linear's: the project's tracker settings, whose credentials reach the issue (null once they are removed). */
  settings: SettingsRow | null;
}

/**
 * The next action due that no other process holds, with its link and the destination its issue
 * lives on, locked until the transaction ends. An action waits while an earlier one of its link
 * does, though another worker holds that one: an issue is commented on only once it exists, and
 * closed and reopened in the order its runs came.
 */
export async function takeDueAction(sql: Tx, now: Date): Promise<DueAction | null> {
  const [row] = await sql<
    (Omit<DueAction, 'link' | 'destination' | 'settings'> & { link: DueAction['link']; destination: StoredDestination | null; settings: SettingsRow | null })[]
  >`
    select a.id::int as id, a.kind, a.key::text as key, a.payload, a.attempts, a.steps_done, a.created_at,
           jsonb_build_object('id', l.id, 'project_id', l.project_id, 'tracker', l.tracker, 'marker', l.marker, 'issue_key', l.issue_key, 'issue_url', l.issue_url,
                              'issue_state', l.issue_state, 'noted_closed_at', l.noted_closed_at) as link,
           to_jsonb(t) as destination, to_jsonb(u) as settings
    from tracker_actions a
    join tracker_links l on l.id = a.link_id
    left join lateral (select ${destinationColumns(sql)} from notification_destinations where id = l.destination_id) t on true
    left join lateral (select ${settingsColumns(sql)} from tracker_settings s where s.project_id = l.project_id and s.tracker = l.tracker) u on l.destination_id is null
    where a.state = 'pending' and a.next_attempt_at <= ${now}
      and not exists (select 1 from tracker_actions e where e.link_id = a.link_id and e.state = 'pending' and e.id < a.id)
    order by a.next_attempt_at, a.id limit 1 for update of a skip locked`;
  if (!row) return null;
  const noted = row.link.noted_closed_at;
  return {
    ...row,
    link: { ...row.link, id: Number(row.link.id), noted_closed_at: noted ? new Date(noted) : null },
    destination: row.destination ? { ...row.destination, created_at: new Date(row.destination.created_at) } : null,
    settings: row.settings ? { ...row.settings, updated_at: new Date(row.settings.updated_at) } : null,
  };
}

export async function markActionStep(sql: Tx, id: number, step: string): Promise<void> {
  await sql`update tracker_actions set steps_done = array_append(steps_done, ${step}::text) where id = ${id} and not ${step}::text = any(steps_done)`;
}

export async function markActionDone(sql: Tx, id: number, now: Date): Promise<void> {
  await sql`update tracker_actions set state = 'delivered', attempts = attempts + 1, last_error = null, delivered_at = ${now} where id = ${id}`;
}

/** An attempt failed: tried again at `retryAt`, or given up on (failed) when that is null. */
export async function markActionFailed(sql: Tx, id: number, error: string, retryAt: Date | null): Promise<void> {
  await sql`
    update tracker_actions set attempts = attempts + 1, last_error = ${error},
      state = ${retryAt === null ? 'failed' : 'pending'}, next_attempt_at = coalesce(${retryAt}, next_attempt_at)
    where id = ${id}`;
}

/** In the transaction that ends a run: followed once rolled up, when its project has a tracker. */
export async function queueFollow(sql: Tx, runId: number, now: Date): Promise<void> {
  await sql`
    insert into tracker_follow_queue (test_run_id, project_id, queued_at)
    select r.id, r.project_id, ${now} from test_runs r join tracker_settings s on s.project_id = r.project_id where r.id = ${runId}
    on conflict (test_run_id) do nothing`;
}

/**
 * The oldest queued run whose rollup is done (its flakiness counted) that no other process holds,
 * taken from the queue; the transaction's end commits both. Null when none is ready.
 */
export async function takeFollow(sql: Tx): Promise<{ test_run_id: number; project_id: number } | null> {
  const [row] = await sql<{ test_run_id: number; project_id: number }[]>`
    select q.test_run_id, q.project_id from tracker_follow_queue q
    where not exists (select 1 from rollup_queue u where u.test_run_id = q.test_run_id)
    order by q.test_run_id limit 1 for update skip locked`;
  if (!row) return null;
  await sql`delete from tracker_follow_queue where test_run_id = ${row.test_run_id}`;
  return row;
}
