import { randomSecret } from '../config.ts';
import type { Tx } from '../db.ts';

/**
 * The secret that signs URLs: the configured one, else one generated at first start and kept
 * with the data, so every server on one database signs alike.
 */
export async function resolveSigningSecret(sql: Tx, configured: string | null): Promise<string> {
  if (configured) return configured;
  await sql`insert into settings (name, value) values ('signing_secret', ${randomSecret()}) on conflict (name) do nothing`;
  const [row] = await sql<{ value: string }[]>`select value from settings where name = 'signing_secret'`;
  return (row as { value: string }).value;
}
