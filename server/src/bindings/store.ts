import type { Tx } from '../db.ts';
import type { Binding, BindingHost } from './schema.ts';

// The one module that writes `repository_bindings`.

interface BindingRow {
  id: number;
  host: BindingHost;
  name: string;
  created_by: string | null;
  created_at: Date;
}

function present(row: BindingRow): Binding {
  return { ...row, created_at: row.created_at.toISOString() };
}

const columns = (sql: Tx) => sql`b.id, b.host, b.name, u.name as created_by, b.created_at`;

/** A project's bindings, GitHub's first, by name. */
export async function listBindings(sql: Tx, projectId: number): Promise<Binding[]> {
  const rows = await sql<BindingRow[]>`
    select ${columns(sql)} from repository_bindings b left join users u on u.id = b.created_by
    where b.project_id = ${projectId} order by b.host, lower(b.name), b.id`;
  return rows.map(present);
}

/** Binds a repository; null when the project has it bound already (whatever the case it was written in). */
export async function insertBinding(
  sql: Tx,
  projectId: number,
  binding: { host: BindingHost; name: string },
  createdBy: string | null,
  now: Date,
): Promise<Binding | null> {
  const [made] = await sql<{ id: number }[]>`
    insert into repository_bindings (project_id, host, name, created_by, created_at)
    values (${projectId}, ${binding.host}, ${binding.name}, ${createdBy}, ${now})
    on conflict (project_id, host, lower(name)) do nothing returning id`;
  if (!made) return null;
  return getBinding(sql, projectId, made.id);
}

export async function getBinding(sql: Tx, projectId: number, id: number): Promise<Binding | null> {
  const [row] = await sql<BindingRow[]>`
    select ${columns(sql)} from repository_bindings b left join users u on u.id = b.created_by
    where b.project_id = ${projectId} and b.id = ${id}`;
  return row ? present(row) : null;
}

/** The binding of `name` on `host` in the project, whatever its case; null when there is none. */
export async function findBinding(sql: Tx, projectId: number, host: BindingHost, name: string): Promise<Binding | null> {
  const [row] = await sql<BindingRow[]>`
    select ${columns(sql)} from repository_bindings b left join users u on u.id = b.created_by
    where b.project_id = ${projectId} and b.host = ${host} and lower(b.name) = lower(${name})`;
  return row ? present(row) : null;
}

export async function deleteBinding(sql: Tx, projectId: number, id: number): Promise<boolean> {
  const rows = await sql`delete from repository_bindings where project_id = ${projectId} and id = ${id} returning id`;
  return rows.length > 0;
}
