// The operator's upkeep: retention passes, backups and their restore, rebuilt analytics.
import { rebuildRollups } from '../analytics/rollups.ts';
import { writeBackup } from '../backup/backup.ts';
import { describeBackup, describeRestore } from '../backup/describe.ts';
import { restoreBackup } from '../backup/restore.ts';
import { loadConfig } from '../config.ts';
import type { Sql } from '../db.ts';
import { getProject } from '../projects/store.ts';
import { describeReport, runRetentionPass, serverPolicy } from '../retention/index.ts';
import { openStorage } from '../storage/open.ts';
import { type Flags, projectIdFlag, required, UsageError } from './usage.ts';

/** `proctor restore FILE`: a backup into an empty data directory or database. */
export async function restore(file: string): Promise<string> {
  return describeRestore(await restoreBackup(file, loadConfig()));
}

/** Runs an upkeep command; null when `command` is not one. */
export async function maintenanceCommand(sql: Sql, command: string, flags: Flags, version: () => string): Promise<string | null> {
  switch (command) {
    case 'retention run': {
      const projectId = flags.project === undefined ? undefined : projectIdFlag(flags);
      if (projectId !== undefined && !(await getProject(sql, projectId))) throw new UsageError(`no project ${projectId}`);
      const dryRun = flags['dry-run'] === true;
      const config = loadConfig();
      const deps = { sql, storage: await openStorage(config), clock: () => new Date(), defaults: serverPolicy(config) };
      const reports = await runRetentionPass(deps, { projectId, dryRun });
      return reports.map((report) => describeReport(report, dryRun)).join('\n') || 'no projects';
    }
    case 'backup': {
      const out = required(flags, 'out');
      const config = loadConfig();
      const summary = await writeBackup(
        { sql, embedded: !config.databaseUrl, storage: await openStorage(config), storageKind: config.s3 ? 's3' : 'files', proctorVersion: version() },
        out,
      );
      return describeBackup(summary, out, config.s3 !== null);
    }
    case 'analytics rebuild': {
      const projectId = projectIdFlag(flags);
      if (!(await getProject(sql, projectId))) throw new UsageError(`no project ${projectId}`);
      await rebuildRollups(sql, projectId);
      return 'rollups rebuilt';
    }
    default:
      return null;
  }
}
