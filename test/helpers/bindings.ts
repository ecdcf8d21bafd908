import { createKey } from '../../server/src/auth/store.ts';
import type { Sql } from '../../server/src/db.ts';
import { createUser } from '../../server/src/users/store.ts';
import { client } from './http.ts';

// Repositories bound to a project by an instance admin, over the API, as the tests of the server's
// own GitHub App and GitLab token need before a destination may use them.

let admins = 0;

/** An instance admin (`users.is_admin`) and an API client with their personal admin key. */
export async function instanceAdmin(sql: Sql, url: string): Promise<{ userId: string; api: ReturnType<typeof client> }> {
  const userId = await createUser(sql, { email: `root${Date.now()}-${++admins}@example.com`, name: `Root ${admins}`, picture: '', isAdmin: true });
  return { userId, api: client(url, await createKey(sql, { userId }, 'admin')) };
}

/** Binds `name` on `host` to the project as an instance admin; the binding's id. */
export async function bindRepository(sql: Sql, url: string, projectId: number, host: 'github' | 'gitlab', name: string): Promise<number> {
  const { api } = await instanceAdmin(sql, url);
  const bound = await api.post(`/api/projects/${projectId}/repository-bindings`, { host, name });
  if (bound.status !== 201) throw new Error(`binding ${host} ${name} to project ${projectId}: ${bound.status} ${bound.text}`);
  return bound.body.data.binding.id as number;
}
