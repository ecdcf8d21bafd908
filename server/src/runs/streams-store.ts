import { ADVISORY_LOCK, type Sql } from '../db.ts';

// The live streams open across the cluster (migration 088): one row a stream, its expiry renewed
// by the node that holds it, so that the limit a client holds counts every node and a node that
// died stops counting once its rows expire. Times are the database's: one clock for every node.

/**
 * A row for a new stream of `client`, unless the client holds `limit` streams that have not
 * expired: whether it was taken. The client's rows are counted under an advisory lock of the
 * client, so that two nodes opening its streams at once never both take the last place.
 */
export async function takeStreamSlot(sql: Sql, slot: { id: string; client: string; node: string }, limit: number, ttlMs: number): Promise<boolean> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${ADVISORY_LOCK.liveStreams}, hashtext(${slot.client}))`;
    // Rows of nodes that died, of any client: the index on expiry finds them.
    await tx`delete from live_streams where expires_at < now()`;
    const [held] = await tx<{ n: number }[]>`select count(*)::int as n from live_streams where client = ${slot.client}`;
    if ((held?.n ?? 0) >= limit) return false;
    await tx`
      insert into live_streams (id, client, node, expires_at)
      values (${slot.id}, ${slot.client}, ${slot.node}, now() + make_interval(secs => ${ttlMs / 1000}))`;
    return true;
  });
}

/** The expiry of the streams `ids` (this node's, still open), `ttlMs` from now. */
export async function renewStreamSlots(sql: Sql, ids: string[], ttlMs: number): Promise<void> {
  if (ids.length === 0) return;
  await sql`update live_streams set expires_at = now() + make_interval(secs => ${ttlMs / 1000}) where id = any(${ids}::uuid[])`;
}

/** A stream closed: its row no longer counts. */
export async function releaseStreamSlot(sql: Sql, id: string): Promise<void> {
  await sql`delete from live_streams where id = ${id}`;
}
