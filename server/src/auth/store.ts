import type { Tx } from '../db.ts';
import { generateKey, type KeyKind } from './keys.ts';

export interface StoredKey {
  id: string;
  secret_hash: Buffer;
  project_id: number | null;
  user_id: string | null;
}

export async function findKey(sql: Tx, id: string): Promise<StoredKey | null> {
  const [row] = await sql<StoredKey[]>`
    select id, secret_hash, project_id, user_id from api_keys where id = ${id}`;
  return row ?? null;
}

/** Creates a key for a project or a user and returns the plain key: the only time it exists. */
export async function createKey(sql: Tx, owner: { projectId: number } | { userId: string }): Promise<string> {
  const kind: KeyKind = 'projectId' in owner ? 'project' : 'user';
  const key = generateKey(kind);
  await sql`
    insert into api_keys (id, secret_hash, project_id, user_id)
    values (${key.id}, ${key.secretHash}, ${'projectId' in owner ? owner.projectId : null}, ${'userId' in owner ? owner.userId : null})`;
  return key.plain;
}

/** A key for one run's reporter, made by the executor; it goes when the run ends. */
export async function createRunKey(sql: Tx, projectId: number, runId: number): Promise<string> {
  const key = generateKey('project');
  await sql`
    insert into api_keys (id, secret_hash, project_id, test_run_id) values (${key.id}, ${key.secretHash}, ${projectId}, ${runId})`;
  return key.plain;
}

export async function deleteRunKeys(sql: Tx, runId: number): Promise<void> {
  await sql`delete from api_keys where test_run_id = ${runId}`;
}
