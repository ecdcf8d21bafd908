import { expect } from 'vitest';
import { createLoginLink } from '../../server/src/sessions/store.ts';
import { seedUser, type TestServer } from './server.ts';

/**
 * A new member of the project, signed in through a login link: a reader of the project's pages
 * under `/projects/<id>`, each expected to answer 200, as HTML.
 */
export async function memberPages(server: Pick<TestServer, 'sql' | 'url' | 'clock'>, projectId: number): Promise<(path: string) => Promise<string>> {
  const { userId } = await seedUser(server.sql, [projectId], { role: 'member' });
  const signIn = await fetch(`${server.url}/sign-in/link?token=${await createLoginLink(server.sql, userId, server.clock.now)}`, { redirect: 'manual' });
  const cookie = (signIn.headers.get('set-cookie') as string).split(';')[0] as string;
  return async (path) => {
    const response = await fetch(`${server.url}/projects/${projectId}${path}`, { headers: { cookie } });
    expect(response.status, path).toBe(200);
    return response.text();
  };
}
