import type { Tx } from '../db.ts';
import { maskReceiverUrl } from './masking.ts';
import type { Delivery, Destination, DestinationUpdate, NewDestination } from './schema.ts';

// The one module that writes `notification_destinations`.

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
  environments: string[];
  when: Destination['when'];
  secret: string | null;
  token: string | null;
  created_at: Date;
}

/** A destination's columns, as `StoredDestination` holds them. */
export const destinationColumns = (sql: Tx) =>
  sql`id, project_id, type, url, repo, gitlab_project as project, recipients, environments, "when", secret, token, created_at`;

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

export async function getDestination(sql: Tx, projectId: number, id: number): Promise<StoredDestination | null> {
  const [row] = await sql<StoredDestination[]>`
    select ${destinationColumns(sql)} from notification_destinations where project_id = ${projectId} and id = ${id}`;
  return row ?? null;
}

export async function createDestination(sql: Tx, projectId: number, given: NewDestination, now: Date): Promise<StoredDestination> {
  const [row] = await sql<StoredDestination[]>`
    insert into notification_destinations (project_id, type, url, repo, gitlab_project, recipients, environments, "when", secret, token, created_at, updated_at)
    values (${projectId}, ${given.type}, ${given.url ?? null}, ${given.repo ?? null}, ${given.project ?? null}, ${given.recipients ?? null}, ${given.environments}, ${given.when},
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
    select id::int as id, destination_id, test_run_id, event_id::text as event_id, state, attempts, last_error
    from notification_deliveries where project_id = ${projectId} and test_run_id = ${runId}
    order by id limit ${limit} offset ${offset}`;
  return { rows, total: count?.total ?? 0 };
}
