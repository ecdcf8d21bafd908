import { randomUUID } from 'node:crypto';
import type { Tx } from '../db.ts';
import { maskReceiverUrl } from './masking.ts';
import type { FailedStep } from '../failuregroups/index.ts';
import type { Delivery, Destination, DestinationUpdate, NewDestination } from './schema.ts';

// The one module that writes `notification_destinations`, `notification_deliveries` (the outbox of
// run endings to tell) and `github_pull_comments`.

/** A destination as the sender needs it: with its write-only secret and token. */
export interface StoredDestination {
  id: number;
  project_id: number;
  type: Destination['type'];
  url: string | null;
  repo: string | null;
  /** A GitLab project's path or id. */
  project: string | null;
  /** The addresses an email destination mails. */
  recipients: string[] | null;
  /** A Slack destination by bot token: the channel or user id it posts to (its url is then null). */
  channel: string | null;
  environments: string[];
  when: Destination['when'];
  secret: string | null;
  token: string | null;
  created_at: Date;
}

/** A destination's columns, as `StoredDestination` holds them. */
export const destinationColumns = (sql: Tx) =>
  sql`id, project_id, type, url, repo, gitlab_project as project, recipients, slack_channel as channel, environments, "when", secret, token, created_at`;

/** What the API shows of a destination: never its secret, its token or a credential in its URL. */
export function presentDestination(row: StoredDestination): Destination {
  const url = row.url === null ? null : maskReceiverUrl(row.type, row.url);
  return {
    id: row.id,
    type: row.type,
    url: url?.url ?? null,
    repo: row.repo,
    project: row.project,
    recipients: row.recipients,
    channel: row.channel,
    environments: row.environments,
    when: row.when,
    has_secret: row.secret !== null || row.token !== null || url?.masked === true,
    created_at: row.created_at.toISOString(),
  };
}

export async function listDestinations(sql: Tx, projectId: number, limit: number, offset: number): Promise<{ rows: StoredDestination[]; total: number }> {
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from notification_destinations where project_id = ${projectId}`;
  const rows = await sql<StoredDestination[]>`
    select ${destinationColumns(sql)} from notification_destinations where project_id = ${projectId} order by id limit ${limit} offset ${offset}`;
  return { rows, total: count?.total ?? 0 };
}

/** The project's GitHub and GitLab destinations, GitHub's first, in the order they were made. */
export async function forgeDestinationRows(sql: Tx, projectId: number): Promise<StoredDestination[]> {
  return sql<StoredDestination[]>`
    select ${destinationColumns(sql)} from notification_destinations
    where project_id = ${projectId} and type in ('github', 'gitlab') order by type, id`;
}

export async function getDestination(sql: Tx, projectId: number, id: number): Promise<StoredDestination | null> {
  const [row] = await sql<StoredDestination[]>`
    select ${destinationColumns(sql)} from notification_destinations where project_id = ${projectId} and id = ${id}`;
  return row ?? null;
}

export async function createDestination(sql: Tx, projectId: number, given: NewDestination, now: Date): Promise<StoredDestination> {
  const [row] = await sql<StoredDestination[]>`
    insert into notification_destinations (project_id, type, url, repo, gitlab_project, recipients, slack_channel, environments, "when", secret, token, created_at, updated_at)
    values (${projectId}, ${given.type}, ${given.url ?? null}, ${given.repo ?? null}, ${given.project ?? null}, ${given.recipients ?? null}, ${given.channel ?? null}, ${given.environments}, ${given.when},
            ${given.secret ?? null}, ${given.token ?? null}, ${now}, ${now})
    returning ${destinationColumns(sql)}`;
  return row as StoredDestination;
}

export async function updateDestination(sql: Tx, projectId: number, id: number, change: DestinationUpdate, now: Date): Promise<StoredDestination | null> {
  const [row] = await sql<StoredDestination[]>`
    update notification_destinations set
      url = ${change.url === undefined ? sql`url` : change.url},
      repo = ${change.repo === undefined ? sql`repo` : change.repo},
      gitlab_project = ${change.project === undefined ? sql`gitlab_project` : change.project},
      recipients = ${change.recipients === undefined ? sql`recipients` : change.recipients},
      slack_channel = ${change.channel === undefined ? sql`slack_channel` : change.channel},
      environments = ${change.environments === undefined ? sql`environments` : change.environments},
      "when" = ${change.when === undefined ? sql`"when"` : change.when},
      secret = ${change.secret === undefined ? sql`secret` : change.secret},
      token = ${change.token === undefined ? sql`token` : change.token},
      updated_at = ${now}
    where project_id = ${projectId} and id = ${id}
    returning ${destinationColumns(sql)}`;
  return row ?? null;
}

export async function deleteDestination(sql: Tx, projectId: number, id: number): Promise<boolean> {
  const rows = await sql`delete from notification_destinations where project_id = ${projectId} and id = ${id} returning id`;
  return rows.length > 0;
}

/** The environment slugs of the project among `slugs`. */
export async function knownEnvironments(sql: Tx, projectId: number, slugs: string[]): Promise<Set<string>> {
  const rows = await sql<{ slug: string }[]>`select slug from environments where project_id = ${projectId} and slug = any(${slugs}::text[])`;
  return new Set(rows.map((row) => row.slug));
}

export async function listDeliveries(sql: Tx, projectId: number, runId: number, limit: number, offset: number): Promise<{ rows: Delivery[]; total: number }> {
  const [count] = await sql<{ total: number }[]>`
    select count(*)::int as total from notification_deliveries where project_id = ${projectId} and test_run_id = ${runId}`;
  const rows = await sql<Delivery[]>`
    select id::int as id, destination_id, test_run_id, kind, event_id::text as event_id, state, attempts, last_error
    from notification_deliveries where project_id = ${projectId} and test_run_id = ${runId}
    order by id limit ${limit} offset ${offset}`;
  return { rows, total: count?.total ?? 0 };
}

// The outbox: a delivery per destination told of a run's ending (and, rules-store.ts, of owners'
// failures and digests), attempted until it goes through.

/** A run that has ended, as the outbox reads it. */
export interface EndedRun {
  id: number;
  project_id: number;
  environment_id: number;
  environment_slug: string;
  state: string;
  test_run_branch: string | null;
  send_notifications: boolean;
}

export async function endedRunToTell(sql: Tx, runId: number): Promise<EndedRun | null> {
  const [run] = await sql<EndedRun[]>`
    select r.id, r.project_id, r.environment_id, e.slug as environment_slug, r.state, r.test_run_branch, r.send_notifications
    from test_runs r join environments e on e.id = r.environment_id where r.id = ${runId}`;
  return run ?? null;
}

/** The project's destinations, as an ending picks those it tells. */
export async function destinationsToTell(sql: Tx, projectId: number): Promise<Pick<StoredDestination, 'id' | 'environments' | 'when'>[]> {
  return sql<Pick<StoredDestination, 'id' | 'environments' | 'when'>[]>`
    select id, environments, "when" from notification_destinations where project_id = ${projectId} and "when" <> 'never' order by id`;
}

/** The state the previous run of the environment and branch ended in, of `states` (a cancelled one skipped); null for the first. */
export async function previousState(sql: Tx, run: EndedRun, states: readonly string[]): Promise<string | null> {
  const [row] = await sql<{ state: string }[]>`
    select state from test_runs
    where environment_id = ${run.environment_id} and test_run_branch is not distinct from ${run.test_run_branch}
      and id < ${run.id} and state in ${sql(states)}
    order by id desc limit 1`;
  return row?.state ?? null;
}

/** One pending delivery of the run's ending per destination, each with an event id of its own, due now. */
export async function queueDeliveries(sql: Tx, run: Pick<EndedRun, 'id' | 'project_id'>, destinationIds: number[], now: Date): Promise<void> {
  await sql`
    insert into notification_deliveries (project_id, destination_id, test_run_id, event_id, state, next_attempt_at, created_at)
    select ${run.project_id}, destination_id, ${run.id}, event_id::uuid, 'pending', ${now}, ${now}
    from unnest(${destinationIds}::int[], ${destinationIds.map(() => randomUUID())}::text[]) as t (destination_id, event_id)
    on conflict (destination_id, test_run_id, kind) do nothing`;
}

export interface DueDelivery {
  id: number;
  event_id: string;
  /** run: a run's ending; owners: the failures of a run routed to their owners' destination; digest: a scheduled digest. */
  kind: 'run' | 'owners' | 'digest';
  /** The run told of; null for a digest. */
  test_run_id: number | null;
  /** An owners delivery: the owner patterns of the rules that routed it. */
  owners: string[] | null;
  /** A digest: its subscription and the moment it was due. */
  digest_subscription_id: number | null;
  due_at: Date | null;
  attempts: number;
  /** The JSON body, once composed. */
  payload: string | null;
  /** Steps of a several-step delivery that went through at an earlier attempt. */
  steps_done: string[];
  created_at: Date;
  destination: StoredDestination;
}

/** The next delivery due that no other process holds, with its destination, locked until the transaction ends. */
export async function takeDue(sql: Tx, now: Date): Promise<DueDelivery | null> {
  const [row] = await sql<(Omit<DueDelivery, 'destination'> & { destination: StoredDestination })[]>`
    select d.id::int as id, d.event_id::text as event_id, d.kind, d.test_run_id, d.owners, d.digest_subscription_id, d.due_at, d.attempts, d.payload, d.steps_done, d.created_at,
           to_jsonb(t) as destination
    from notification_deliveries d
    join lateral (select ${destinationColumns(sql)} from notification_destinations where id = d.destination_id) t on true
    where d.state = 'pending' and d.next_attempt_at <= ${now}
    order by d.next_attempt_at, d.id limit 1 for update of d skip locked`;
  if (!row) return null;
  return { ...row, destination: { ...row.destination, created_at: new Date(row.destination.created_at) } };
}

export async function keepPayload(sql: Tx, id: number, payload: string): Promise<void> {
  await sql`update notification_deliveries set payload = ${payload} where id = ${id}`;
}

/** A step of the delivery went through; kept with the attempt's outcome, in its transaction. */
export async function markStepDone(sql: Tx, id: number, step: string): Promise<void> {
  await sql`update notification_deliveries set steps_done = array_append(steps_done, ${step}::text) where id = ${id} and not ${step}::text = any(steps_done)`;
}

export async function markDelivered(sql: Tx, id: number, now: Date): Promise<void> {
  await sql`update notification_deliveries set state = 'delivered', attempts = attempts + 1, last_error = null, delivered_at = ${now} where id = ${id}`;
}

/** An attempt failed: tried again at `retryAt`, or given up on (failed) when that is null. */
export async function markAttemptFailed(sql: Tx, id: number, error: string, retryAt: Date | null): Promise<void> {
  await sql`
    update notification_deliveries set attempts = attempts + 1, last_error = ${error},
      state = ${retryAt === null ? 'failed' : 'pending'}, next_attempt_at = coalesce(${retryAt}, next_attempt_at)
    where id = ${id}`;
}

// Pull request comments (`github_pull_comments`): the comment a GitHub destination keeps on a pull
// request, or the note a GitLab one keeps on a merge request (its iid as the number), and its
// sections (one per environment).

export interface PullComment {
  comment_id: number | null;
  sections: Record<string, string>;
}

/** The destination's comment on the pull request, locked until the transaction ends (made empty when there is none). */
export async function lockPullComment(sql: Tx, destinationId: number, pullNumber: number): Promise<PullComment> {
  await sql`
    insert into github_pull_comments (destination_id, pull_number) values (${destinationId}, ${pullNumber})
    on conflict (destination_id, pull_number) do nothing`;
  const [row] = await sql<{ comment_id: string | null; sections: Record<string, string> }[]>`
    select comment_id::text as comment_id, sections from github_pull_comments
    where destination_id = ${destinationId} and pull_number = ${pullNumber} for update`;
  return { comment_id: row?.comment_id ? Number(row.comment_id) : null, sections: row?.sections ?? {} };
}

export async function savePullComment(sql: Tx, destinationId: number, pullNumber: number, comment: PullComment): Promise<void> {
  await sql`
    update github_pull_comments set comment_id = ${comment.comment_id}, sections = ${sql.json(comment.sections)}
    where destination_id = ${destinationId} and pull_number = ${pullNumber}`;
}

/** The tests that failed in the latest run of `branch` in the environment (other than `runId`), and that run; null when it has none. */
export async function failuresOnBranch(
  sql: Tx,
  environmentSlug: string,
  projectId: number,
  branch: string,
  runId: number,
): Promise<{ runId: number; runNumber: number; failed: Set<string> } | null> {
  const [run] = await sql<{ id: number; number: number }[]>`
    select r.id, r.number from test_runs r join environments e on e.id = r.environment_id
    where r.project_id = ${projectId} and e.slug = ${environmentSlug} and r.test_run_branch = ${branch} and r.id <> ${runId}
      and r.state in ('passed', 'failed') and r.details_deleted_at is null
    order by r.id desc limit 1`;
  if (!run) return null;
  const rows = await sql<{ test_case_id: string }[]>`
    select test_case_id from test_results where test_run_id = ${run.id} and is_final and outcome = 'failed'`;
  return { runId: run.id, runNumber: run.number, failed: new Set(rows.map((row) => row.test_case_id)) };
}

/** The chat user id linked to the user `actor` names: by user id, or by a linked SCM account's username or id. */
export async function chatAccountOf(sql: Tx, actor: string | null): Promise<string | null> {
  if (!actor) return null;
  const [row] = await sql<{ chat_user_id: string }[]>`
    select c.account->>'user_id' as chat_user_id from connected_accounts c
    where c.kind = 'chat' and c.user_id in (
      select u.id from users u where u.id = ${actor}
      union
      select s.user_id from connected_accounts s where s.kind = 'scm' and (s.account->>'username' = ${actor} or s.account->>'user_id' = ${actor}))
    order by c.id limit 1`;
  return row?.chat_user_id ?? null;
}

// A run's story, as its messages tell it (compose.ts).

/** A run as a message tells it: its counts, its environment and project, who triggered it. */
export interface StoryRun {
  id: number;
  /** The run's number in its project: what a message names it by (its link carries the id). */
  number: number;
  project_id: number;
  project_name: string;
  state: string;
  environment_slug: string;
  environment_name: string;
  environment_id: number;
  branch: string | null;
  commit: string | null;
  build_url: string | null;
  /** The page of the CI job that ran or reported the run (what its CI said), else its build's URL; null without either. */
  ci_job_url: string | null;
  scm_actor: string | null;
  total_count: number;
  success_count: number;
  failed_count: number;
  flaky_count: number;
  skipped_count: number;
  snoozed_count: number;
  duration: number | null;
  run_ended_at: Date | null;
}

export async function storyRunOf(sql: Tx, runId: number): Promise<StoryRun | null> {
  const [run] = await sql<StoryRun[]>`
    select r.id, r.number, r.project_id, p.name as project_name, r.state, e.slug as environment_slug, e.name as environment_name, r.environment_id,
           coalesce(r.build_branch, r.test_run_branch) as branch, coalesce(r.test_run_head_sha, r."commit") as "commit", r.build_url,
           coalesce(r.metadata->>'ci_build_url', r.build_url) as ci_job_url, r.scm_actor,
           r.total_count, r.success_count, r.failed_count, r.flaky_count, r.skipped_count, r.snoozed_count, r.duration, r.run_ended_at
    from test_runs r join environments e on e.id = r.environment_id join projects p on p.id = r.project_id
    where r.id = ${runId}`;
  return run ?? null;
}

/** A failed or flaky test of a run, and whether it (or its failure group) failed before in the environment. */
export interface RunFailureRow {
  test_case_id: string;
  title: string;
  file_path: string;
  runner_project: string;
  outcome: string;
  snoozed: boolean;
  error_message: string | null;
  failure_group_id: string | null;
  /** The failure group's title: what the failure is, as people name it. */
  failure_group_title: string | null;
  failed_steps: FailedStep[] | null;
  seen_before: boolean;
  /** The test's owners (CODEOWNERS and `owner` annotations, as its latest listing found them). */
  owners: string[];
}

/**
 * The run's failed and flaky tests: seen before when its failure group (or, without one, the test
 * itself) failed in an earlier run of this environment.
 */
export async function failuresOfRun(sql: Tx, projectId: number, environmentId: number, runId: number): Promise<RunFailureRow[]> {
  return sql<RunFailureRow[]>`
    select t.test_case_id, coalesce(l.title, t.test_case_id) as title, coalesce(l.file_path, '') as file_path,
           coalesce(l.runner_project, '') as runner_project, t.outcome, t.snoozed, t.final_error_message as error_message, t.failure_group_id,
           g.title as failure_group_title, t.failed_steps, coalesce(tc.owners, '{}') as owners,
           case when t.failure_group_id is not null then exists (
                  select 1 from failure_group_events ev
                  where ev.project_id = ${projectId} and ev.group_id = t.failure_group_id and ev.test_run_id < ${runId}
                    and ev.environment_id = ${environmentId} and ev.kind in ('attach', 'sighting'))
                else coalesce((
                  select before.outcome = 'failed' from test_runs r2
                  join test_results before on before.test_run_id = r2.id and before.test_case_id = t.test_case_id and before.is_final
                  where r2.environment_id = ${environmentId} and r2.id < ${runId}
                  order by r2.id desc limit 1), false)
           end as seen_before
    from test_results t
    left join test_run_tests l on l.test_run_id = t.test_run_id and l.test_case_id = t.test_case_id
    left join failure_groups g on t.failure_group_id is not null and g.project_id = ${projectId} and g.id = t.failure_group_id
    left join test_cases tc on tc.project_id = ${projectId} and tc.id = t.test_case_id
    where t.test_run_id = ${runId} and t.is_final and t.outcome in ('failed', 'flaky')`;
}
