import type { BackupSummary } from './format.ts';
import type { RestoreReport } from './restore.ts';

// What `proctor backup` and `proctor restore` print: one line each, with the counts.

const rowsOf = (summary: BackupSummary) => Object.values(summary.tables).reduce((sum, n) => sum + n, 0);

function filesOf(summary: BackupSummary): string {
  return `${summary.files.count} stored files (${summary.files.bytes} bytes)`;
}

export function describeBackup(summary: BackupSummary, out: string, bytesInS3: boolean): string {
  const files = bytesInS3 ? 'the stored files stay in the S3 bucket (back it up with its own means)' : filesOf(summary);
  const removed = summary.files.removed_meanwhile > 0 ? `; ${summary.files.removed_meanwhile} files removed by retention while it ran` : '';
  return `backed up ${rowsOf(summary)} rows of ${Object.keys(summary.tables).length} tables and ${files} to ${out}${removed}`;
}

export function describeRestore(report: RestoreReport): string {
  const upgraded = report.upgradedWith.length > 0 ? `, upgraded with ${report.upgradedWith.join(', ')}` : '';
  return `restored ${rowsOf(report.summary)} rows and ${filesOf(report.summary)} from Proctor ${report.header.proctor_version}'s backup of ${report.header.created_at}${upgraded}`;
}
