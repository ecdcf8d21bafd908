import type { Tx } from '../db.ts';

export async function runExists(sql: Tx, projectId: number, runId: number): Promise<boolean> {
  const [row] = await sql`select 1 from test_runs where project_id = ${projectId} and id = ${runId}`;
  return row !== undefined;
}
