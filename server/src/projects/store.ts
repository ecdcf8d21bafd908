import type { Tx } from '../db.ts';
import type { Role } from '../principals.ts';

export interface Project {
  id: number;
  name: string;
  /** The test repository triggered runs check out; null for a project that only receives reports. */
  repo_url: string | null;
  /** owner/name, from the repository by default; empty when there is none. */
  repo_name: string;
  /** A report, a JUnit upload or an agent naming an environment the project lacks makes it. */
  create_environments_on_first_use: boolean;
  /** Approved screenshot baselines may be committed to the repository's default branch. */
  baselines_to_default_branch: boolean;
  /** A visual change whose share of changed pixels is at most this, repeating in other places, is noise; null: off. */
  visual_noise_ratio: number | null;
  /** The recent runs (this one included) the noise rule looks at. */
  visual_noise_runs: number;
  created_at: Date;
}

const columns = (sql: Tx) =>
  sql`id, name, repo_url, repo_name, create_environments_on_first_use, baselines_to_default_branch, visual_noise_ratio, visual_noise_runs, created_at`;

export async function createProject(sql: Tx, input: { name: string; repoUrl: string | null; repoName: string }): Promise<Project> {
  const [row] = await sql<Project[]>`
    insert into projects (name, repo_url, repo_name)
    values (${input.name}, ${input.repoUrl}, ${input.repoName})
    returning ${columns(sql)}`;
  return row as Project;
}

export async function getProject(sql: Tx, id: number): Promise<Project | null> {
  const [row] = await sql<Project[]>`select ${columns(sql)} from projects where id = ${id}`;
  return row ?? null;
}

export interface ProjectUpdate {
  name?: string;
  repo_url?: string | null;
  repo_name?: string;
  create_environments_on_first_use?: boolean;
  baselines_to_default_branch?: boolean;
  visual_noise_ratio?: number | null;
  visual_noise_runs?: number;
}

/** Sets the fields given; null when there is no such project. */
export async function updateProject(sql: Tx, id: number, patch: ProjectUpdate): Promise<Project | null> {
  const fields = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
  if (Object.keys(fields).length === 0) return getProject(sql, id);
  const [row] = await sql<Project[]>`update projects set ${sql(fields)} where id = ${id} returning ${columns(sql)}`;
  return row ?? null;
}

export async function countProjects(sql: Tx): Promise<number> {
  const [row] = await sql<{ count: number }[]>`select count(*)::int as count from projects`;
  return row?.count ?? 0;
}

/** Makes the person a member with `role`; one already a member keeps the role they have. Returns whether a membership was made. */
export async function addMember(sql: Tx, projectId: number, userId: string, role: Role = 'member', now = new Date()): Promise<boolean> {
  const rows = await sql`
    insert into memberships (project_id, user_id, role, created_at) values (${projectId}, ${userId}, ${role}, ${now})
    on conflict (project_id, user_id) do nothing returning user_id`;
  return rows.length > 0;
}

/** Removes a membership; false when there was none. */
export async function removeMember(sql: Tx, projectId: number, userId: string): Promise<boolean> {
  const rows = await sql`delete from memberships where project_id = ${projectId} and user_id = ${userId} returning user_id`;
  return rows.length > 0;
}

/** Sets a member's role; false when the person is no member. */
export async function setMemberRole(sql: Tx, projectId: number, userId: string, role: Role): Promise<boolean> {
  const rows = await sql`update memberships set role = ${role} where project_id = ${projectId} and user_id = ${userId} returning user_id`;
  return rows.length > 0;
}

export async function isMember(sql: Tx, projectId: number, userId: string): Promise<boolean> {
  return (await roleInProject(sql, projectId, userId)) !== null;
}

/**
 * The role a person acts with in a project: an instance admin's is admin in every project, a
 * member's is their membership's; null for anyone else. Read on every request, so that a
 * demotion takes effect at once.
 */
export async function roleInProject(sql: Tx, projectId: number, userId: string): Promise<Role | null> {
  const [row] = await sql<{ is_admin: boolean; role: Role | null }[]>`
    select u.is_admin, m.role from users u
    left join memberships m on m.user_id = u.id and m.project_id = ${projectId}
    where u.id = ${userId} and exists (select 1 from projects where id = ${projectId})`;
  if (!row) return null;
  return row.is_admin ? 'admin' : row.role;
}

/** A project's members, with who they are, by name. */
export interface Member {
  user_id: string;
  email: string;
  name: string;
  role: Role;
  joined_at: Date;
}

export async function listMembers(sql: Tx, projectId: number): Promise<Member[]> {
  return sql<Member[]>`
    select u.id as user_id, u.email, u.name, m.role, m.created_at as joined_at
    from memberships m join users u on u.id = m.user_id
    where m.project_id = ${projectId} order by lower(u.name), u.email`;
}

/** Locks the project's memberships until the transaction ends, so that two requests cannot each remove "another" admin. */
export async function lockMemberships(sql: Tx, projectId: number): Promise<void> {
  await sql`select user_id from memberships where project_id = ${projectId} for update`;
}

/** How many admins the project has: the last one may not go. */
export async function countAdmins(sql: Tx, projectId: number): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from memberships where project_id = ${projectId} and role = 'admin'`;
  return row?.n ?? 0;
}

/** Every project, by name: an instance admin's list. */
export async function allProjects(sql: Tx): Promise<Project[]> {
  return sql<Project[]>`select ${columns(sql)} from projects order by name, id`;
}

export async function userProjectIds(sql: Tx, userId: string): Promise<number[]> {
  const rows = await sql<{ project_id: number }[]>`
    select project_id from memberships where user_id = ${userId} order by project_id limit 2`;
  return rows.map((row) => row.project_id);
}

/** The projects a person belongs to, by name. */
export async function projectsOfUser(sql: Tx, userId: string): Promise<Project[]> {
  return sql<Project[]>`
    select p.id, p.name, p.repo_url, p.repo_name, p.create_environments_on_first_use, p.baselines_to_default_branch, p.visual_noise_ratio, p.visual_noise_runs, p.created_at
    from projects p join memberships m on m.project_id = p.id
    where m.user_id = ${userId} order by p.name, p.id`;
}
