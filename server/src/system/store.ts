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

/**
 * The address people reach the running server at: PUBLIC_URL, else the one it listens on,
 * recorded at each start so that the CLI's links open the server that holds the data.
 */
export async function recordPublicUrl(sql: Tx, url: string): Promise<void> {
  await sql`insert into settings (name, value) values ('public_url', ${url}) on conflict (name) do update set value = excluded.value`;
}

/** The public URL the server recorded at its last start; null before its first. */
export async function recordedPublicUrl(sql: Tx): Promise<string | null> {
  const [row] = await sql<{ value: string }[]>`select value from settings where name = 'public_url'`;
  return row?.value ?? null;
}

const HEALTH_TIMEOUT_MS = 2000;

/** Whether the database answers a query within the health check's time. */
export async function databaseAnswers(sql: Tx): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), HEALTH_TIMEOUT_MS);
  });
  const probe = sql`select 1`.then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
