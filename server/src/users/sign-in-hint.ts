import type { Tx } from '../db.ts';
import { firstInstanceAdminEmail } from './store.ts';

/**
 * How to sign in, printed by the server at its start as commands that run where they are printed:
 * a link for the first instance admin, or how to make one while the server has none.
 */
export async function signInHint(sql: Tx): Promise<string> {
  const admin = await firstInstanceAdminEmail(sql);
  return admin
    ? `Sign in to the dashboard with a one-time link: npx proctor user login-link --email ${admin} (npx proctor user list shows everyone)`
    : 'No one can sign in yet: npx proctor user create --email <your email> --name <your name> --admin, then npx proctor user login-link --email <your email>';
}
