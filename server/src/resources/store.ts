import type { Tx } from '../db.ts';

export interface ResourceRow {
  id: number;
  project_id: number;
  name: string;
  description: string | null;
  mime_type: string | null;
  size_bytes: number | null;
  external_url: string | null;
  access_level: 'read_write' | 'read' | 'none' | null;
  status: 'pending' | 'uploaded';
  storage_key: string | null;
  stored_bytes: number | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

const columns = (sql: Tx) =>
  sql`id, project_id, name, description, mime_type, size_bytes::float8 as size_bytes, external_url, access_level, status,
      storage_key, stored_bytes::float8 as stored_bytes, created_by, created_at, updated_at`;

export interface NewResource {
  name: string;
  description: string | null;
  mimeType: string | null;
  sizeBytes: number | null;
  externalUrl: string | null;
  accessLevel: ResourceRow['access_level'];
  storageKey: string | null;
  createdBy: string | null;
}

export async function createResource(sql: Tx, projectId: number, input: NewResource, now: Date): Promise<ResourceRow> {
  const [row] = await sql<ResourceRow[]>`
    insert into resources (project_id, name, description, mime_type, size_bytes, external_url, access_level, status,
                           storage_key, created_by, created_at, updated_at)
    values (${projectId}, ${input.name}, ${input.description}, ${input.mimeType}, ${input.sizeBytes}, ${input.externalUrl},
            ${input.accessLevel}, ${input.externalUrl ? 'uploaded' : 'pending'}, ${input.storageKey}, ${input.createdBy},
            ${now}, ${now})
    returning ${columns(sql)}`;
  return row as ResourceRow;
}

export async function getResource(sql: Tx, projectId: number, id: number): Promise<ResourceRow | null> {
  const [row] = await sql<ResourceRow[]>`select ${columns(sql)} from resources where project_id = ${projectId} and id = ${id}`;
  return row ?? null;
}

/** For signed URLs, which carry no project scope: the signature names the resource. */
export async function getResourceById(sql: Tx, id: number): Promise<ResourceRow | null> {
  const [row] = await sql<ResourceRow[]>`select ${columns(sql)} from resources where id = ${id}`;
  return row ?? null;
}

export async function listResources(sql: Tx, projectId: number, limit: number, offset: number): Promise<{ rows: ResourceRow[]; total: number }> {
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from resources where project_id = ${projectId}`;
  const rows = await sql<ResourceRow[]>`
    select ${columns(sql)} from resources where project_id = ${projectId} order by id desc limit ${limit} offset ${offset}`;
  return { rows, total: count?.total ?? 0 };
}

export async function recordStoredBytes(sql: Tx, id: number, storedBytes: number, now: Date): Promise<void> {
  await sql`update resources set stored_bytes = ${storedBytes}, updated_at = ${now} where id = ${id}`;
}

export async function updateResource(
  sql: Tx,
  projectId: number,
  id: number,
  patch: { name?: string; description?: string; status?: 'uploaded' },
  now: Date,
): Promise<ResourceRow | null> {
  const fields = { ...Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)), updated_at: now };
  const [row] = await sql<ResourceRow[]>`
    update resources set ${sql(fields)} where project_id = ${projectId} and id = ${id} returning ${columns(sql)}`;
  return row ?? null;
}

export async function deleteResource(sql: Tx, projectId: number, id: number): Promise<ResourceRow | null> {
  const [row] = await sql<ResourceRow[]>`delete from resources where project_id = ${projectId} and id = ${id} returning ${columns(sql)}`;
  return row ?? null;
}
