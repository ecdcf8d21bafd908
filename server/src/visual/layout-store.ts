import type { Tx } from '../db.ts';
import type { WireSnapshotLayout } from '@proctor/reporter/wire';

// The one module that writes `run_snapshot_layouts`: where a run's Playwright keeps its baselines.

/** Keeps the run's snapshot layout as its first shard reported it (later shards' are the same config's). */
export async function recordSnapshotLayout(sql: Tx, projectId: number, runId: number, layout: WireSnapshotLayout, now: Date): Promise<void> {
  await sql`
    insert into run_snapshot_layouts (test_run_id, project_id, platform, config_dir, projects, created_at)
    values (${runId}, ${projectId}, ${layout.platform}, ${layout.config_dir}, ${sql.json(layout.projects as never)}, ${now})
    on conflict (test_run_id) do nothing`;
}

/** The run's snapshot layout; null when its reporter sent none (an older reporter, a JUnit upload). */
export async function snapshotLayoutOf(sql: Tx, runId: number): Promise<WireSnapshotLayout | null> {
  const [row] = await sql<WireSnapshotLayout[]>`select platform, config_dir, projects from run_snapshot_layouts where test_run_id = ${runId}`;
  return row ?? null;
}
