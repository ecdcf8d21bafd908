import type { Tx } from '../db.ts';
import type { KeyScope } from '../principals.ts';
import { generateKey, type KeyKind } from './keys.ts';

// The one module that writes `api_keys`.

export interface StoredKey {
  id: string;
  secret_hash: Buffer;
  project_id: number | null;
  user_id: string | null;
  scope: KeyScope;
  /** A run's key, or an agent's token (with `agent_id`): bound to that run. */
  test_run_id: number | null;
  agent_id: number | null;
  /** The run's key the executor serves a run of agents with: the one run-bound key that may join its run as an agent. */
  joins_as_agent: boolean;
  /** The state of the run it is bound to, read with the key: a run-bound key ends with its run. */
  run_state: string | null;
}

// The run's state comes with the key, in the same statement: no request of a run-bound key needs a second one.
const STORED_KEY_COLUMNS = (sql: Tx) => sql`
  k.id, k.secret_hash, k.project_id, k.user_id, k.scope, k.test_run_id, k.agent_id, k.joins_as_agent, r.state as run_state`;

export async function findKey(sql: Tx, id: string): Promise<StoredKey | null> {
  const [row] = await sql<StoredKey[]>`
    select ${STORED_KEY_COLUMNS(sql)} from api_keys k left join test_runs r on r.id = k.test_run_id where k.id = ${id}`;
  return row ?? null;
}

/** The keys of `ids` that exist, in one statement. */
export async function findKeys(sql: Tx, ids: string[]): Promise<StoredKey[]> {
  return sql<StoredKey[]>`
    select ${STORED_KEY_COLUMNS(sql)} from api_keys k left join test_runs r on r.id = k.test_run_id where k.id = any(${ids}::text[])`;
}

export type KeyOwner = { projectId: number } | { userId: string };

/** Creates a key for a project or a user and returns the plain key: the only time it exists. */
export async function createKey(sql: Tx, owner: KeyOwner, scope: KeyScope = 'admin', createdBy: string | null = null): Promise<string> {
  return (await createListedKey(sql, owner, scope, createdBy)).key;
}

/** As createKey, with the key as `listKeys` lists it beside the plain key; `name` says what it is for. */
export async function createListedKey(
  sql: Tx,
  owner: KeyOwner,
  scope: KeyScope,
  createdBy: string | null = null,
  name: string | null = null,
): Promise<ListedKey & { key: string }> {
  const kind: KeyKind = 'projectId' in owner ? 'project' : 'user';
  const key = generateKey(kind);
  await sql`
    insert into api_keys (id, secret_hash, project_id, user_id, scope, created_by, name)
    values (${key.id}, ${key.secretHash}, ${'projectId' in owner ? owner.projectId : null}, ${'userId' in owner ? owner.userId : null}, ${scope}, ${createdBy}, ${name})`;
  const [listed] = await listKeys(sql, owner, key.id);
  return { ...(listed as ListedKey), key: key.plain };
}

/** A key as listed: never its secret or hash. */
export interface ListedKey {
  id: string;
  /** What it is for, as its maker named it; null when it was given none. */
  name: string | null;
  kind: KeyKind;
  scope: KeyScope;
  test_run_id: number | null;
  /** That run's number in the project: what pages name it by. */
  test_run_number: number | null;
  /** Who made it: a person's name, or null for one made from the command line or by the server. */
  created_by: { id: string; name: string } | null;
  created_at: Date;
  last_used_at: Date | null;
}

/** A project's keys (its runs' and agents' included) or a user's, oldest first; one key when `id` is given. */
export async function listKeys(sql: Tx, owner: KeyOwner, id: string | null = null): Promise<ListedKey[]> {
  const where = 'projectId' in owner ? sql`k.project_id = ${owner.projectId}` : sql`k.user_id = ${owner.userId}`;
  return sql<ListedKey[]>`
    select k.id, k.name, case when k.project_id is null then 'user' else 'project' end as kind, k.scope, k.test_run_id, r.number as test_run_number,
           case when u.id is null then null else jsonb_build_object('id', u.id, 'name', u.name) end as created_by, k.created_at, k.last_used_at
    from api_keys k left join users u on u.id = k.created_by left join test_runs r on r.id = k.test_run_id
    where ${where} and (${id}::text is null or k.id = ${id}) order by k.created_at, k.id`;
}

/** The key was used now; the caller throttles how often this is written. */
export async function touchKey(sql: Tx, id: string, now: Date): Promise<void> {
  await sql`update api_keys set last_used_at = ${now} where id = ${id}`;
}

/** Revokes a key of `owner`; false when it has no such key. */
export async function revokeKey(sql: Tx, owner: KeyOwner | null, id: string): Promise<boolean> {
  const mine = owner === null ? sql`true` : 'projectId' in owner ? sql`project_id = ${owner.projectId}` : sql`user_id = ${owner.userId}`;
  const rows = await sql`delete from api_keys where id = ${id} and ${mine} returning id`;
  return rows.length > 0;
}

/**
 * A key for one run's reporter, made by the executor; it goes when the run ends. `joinsAsAgent`:
 * the executor's own key to serve a run of agents, which may also join that run as an agent (a
 * reporter's key may not: its tests could mint agents' tokens with it).
 */
export async function createRunKey(sql: Tx, projectId: number, runId: number, joinsAsAgent = false): Promise<string> {
  const key = generateKey('project');
  await sql`
    insert into api_keys (id, secret_hash, project_id, test_run_id, scope, joins_as_agent)
    values (${key.id}, ${key.secretHash}, ${projectId}, ${runId}, 'report', ${joinsAsAgent})`;
  return key.plain;
}

/** An agent's own token, made when it joins: its run's results and its own agent's calls. */
export async function createAgentToken(sql: Tx, projectId: number, runId: number, agentId: number): Promise<string> {
  const key = generateKey('project');
  await sql`
    insert into api_keys (id, secret_hash, project_id, test_run_id, agent_id, scope)
    values (${key.id}, ${key.secretHash}, ${projectId}, ${runId}, ${agentId}, 'report')`;
  return key.plain;
}

export async function deleteRunKeys(sql: Tx, runId: number): Promise<void> {
  // Agents' tokens stay listed until their run goes, but are refused from the run's end on (the
  // run's state is read with each key): an agent hears of the end from that 401.
  await sql`delete from api_keys where test_run_id = ${runId} and agent_id is null`;
}
