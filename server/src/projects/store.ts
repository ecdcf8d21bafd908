import type { Tx } from '../db.ts';

export interface Project {
  id: number;
  name: string;
  repo_url: string;
  repo_name: string;
  created_at: Date;
}

export async function createProject(sql: Tx, input: { name: string; repoUrl: string; repoName: string }): Promise<Project> {
  const [row] = await sql<Project[]>`
    insert into projects (name, repo_url, repo_name)
    values (${input.name}, ${input.repoUrl}, ${input.repoName})
    returning id, name, repo_url, repo_name, created_at`;
  return row as Project;
}

export async function getProject(sql: Tx, id: number): Promise<Project | null> {
  const [row] = await sql<Project[]>`select id, name, repo_url, repo_name, created_at from projects where id = ${id}`;
  return row ?? null;
}

export async function countProjects(sql: Tx): Promise<number> {
  const [row] = await sql<{ count: number }[]>`select count(*)::int as count from projects`;
  return row?.count ?? 0;
}

export async function addMember(sql: Tx, projectId: number, userId: string): Promise<void> {
  await sql`
    insert into memberships (project_id, user_id) values (${projectId}, ${userId})
    on conflict (project_id, user_id) do nothing`;
}

/** Removes a membership; false when there was none. */
export async function removeMember(sql: Tx, projectId: number, userId: string): Promise<boolean> {
  const rows = await sql`delete from memberships where project_id = ${projectId} and user_id = ${userId} returning user_id`;
  return rows.length > 0;
}

export async function isMember(sql: Tx, projectId: number, userId: string): Promise<boolean> {
  const [row] = await sql`select 1 from memberships where project_id = ${projectId} and user_id = ${userId}`;
  return row !== undefined;
}

export async function userProjectIds(sql: Tx, userId: string): Promise<number[]> {
  const rows = await sql<{ project_id: number }[]>`
    select project_id from memberships where user_id = ${userId} order by project_id limit 2`;
  return rows.map((row) => row.project_id);
}

/** The projects a person belongs to, by name. */
export async function projectsOfUser(sql: Tx, userId: string): Promise<Project[]> {
  return sql<Project[]>`
    select p.id, p.name, p.repo_url, p.repo_name, p.created_at
    from projects p join memberships m on m.project_id = p.id
    where m.user_id = ${userId} order by p.name, p.id`;
}
