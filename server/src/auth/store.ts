import type { Tx } from '../db.ts';
import type { KeyScope } from '../http/access.ts';
import { generateKey, type KeyKind } from './keys.ts';

export interface StoredKey {
  id: string;
  secret_hash: Buffer;
  project_id: number | null;
  user_id: string | null;
  scope: KeyScope;
}

export async function findKey(sql: Tx, id: string): Promise<StoredKey | null> {
  const [row] = await sql<StoredKey[]>`
    select id, secret_hash, project_id, user_id, scope from api_keys where id = ${id}`;
  return row ?? null;
}

export type KeyOwner = { projectId: number } | { userId: string };

/** Creates a key for a project or a user and returns the plain key: the only time it exists. */
export async function createKey(sql: Tx, owner: KeyOwner, scope: KeyScope = 'admin'): Promise<string> {
  return (await createListedKey(sql, owner, scope)).key;
}

/** As createKey, with the key as `listKeys` lists it beside the plain key. */
export async function createListedKey(sql: Tx, owner: KeyOwner, scope: KeyScope): Promise<ListedKey & { key: string }> {
  const kind: KeyKind = 'projectId' in owner ? 'project' : 'user';
  const key = generateKey(kind);
  const [row] = await sql<ListedKey[]>`
    insert into api_keys (id, secret_hash, project_id, user_id, scope)
    values (${key.id}, ${key.secretHash}, ${'projectId' in owner ? owner.projectId : null}, ${'userId' in owner ? owner.userId : null}, ${scope})
    returning id, ${kind}::text as kind, scope, test_run_id, created_at`;
  return { ...(row as ListedKey), key: key.plain };
}

/** A key as listed: never its secret or hash. */
export interface ListedKey {
  id: string;
  kind: KeyKind;
  scope: KeyScope;
  test_run_id: number | null;
  created_at: Date;
}

/** A project's keys (run keys included) or a user's, oldest first. */
export async function listKeys(sql: Tx, owner: KeyOwner): Promise<ListedKey[]> {
  const where = 'projectId' in owner ? sql`project_id = ${owner.projectId}` : sql`user_id = ${owner.userId}`;
  return sql<ListedKey[]>`
    select id, case when project_id is null then 'user' else 'project' end as kind, scope, test_run_id, created_at
    from api_keys where ${where} order by created_at, id`;
}

/** Revokes a key of `owner`; false when it has no such key. */
export async function revokeKey(sql: Tx, owner: KeyOwner | null, id: string): Promise<boolean> {
  const mine = owner === null ? sql`true` : 'projectId' in owner ? sql`project_id = ${owner.projectId}` : sql`user_id = ${owner.userId}`;
  const rows = await sql`delete from api_keys where id = ${id} and ${mine} returning id`;
  return rows.length > 0;
}

/** A key for one run's reporter, made by the executor; it goes when the run ends. */
export async function createRunKey(sql: Tx, projectId: number, runId: number): Promise<string> {
  const key = generateKey('project');
  await sql`
    insert into api_keys (id, secret_hash, project_id, test_run_id, scope) values (${key.id}, ${key.secretHash}, ${projectId}, ${runId}, 'report')`;
  return key.plain;
}

export async function deleteRunKeys(sql: Tx, runId: number): Promise<void> {
  await sql`delete from api_keys where test_run_id = ${runId}`;
}
