import type { RunView } from './client.ts';

const ICONS: Record<string, string> = { passed: '✅', failed: '❌', error: '⚠️', cancelled: '⏹️' };

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

function firstLine(text: string | null): string {
  return (
    (text ?? '')
      .split('\n')
      .find((line) => line.trim())
      ?.trim()
      .slice(0, 200) ?? ''
  );
}

/** The job summary: the outcome, a table of counts, the failing tests with their failure groups, the link. */
export function jobSummary(run: RunView, note: string | null): string {
  const t = run.testRun;
  const lines = [
    `## ${ICONS[t.state] ?? ''} Proctor run #${t.id}: ${t.state} on ${cell(t.environment_name)}`,
    '',
    ...(note ? [note, ''] : []),
    '| Total | Passed | Failed | Flaky | Skipped | Duration |',
    '|---:|---:|---:|---:|---:|---:|',
    `| ${t.total_count} | ${t.success_count} | ${t.failed_count} | ${t.flaky_count} | ${t.skipped_count} | ${t.duration === null ? '–' : `${(t.duration / 1000).toFixed(1)} s`} |`,
    '',
  ];
  if (t.error_reason) lines.push('```', t.error_reason.slice(0, 2000), '```', '');
  const failing = run.flattenedSummaryDetails.filter((d) => d.status === 'failed');
  if (failing.length > 0) {
    lines.push('### Failing tests', '', '| Test | Project | Error | Failure group |', '|---|---|---|---|');
    for (const d of failing.slice(0, 100)) {
      const snoozed = d.snoozed ? ' (snoozed)' : '';
      lines.push(
        `| ${cell(d.title)}${snoozed}<br>\`${cell(d.file_path)}\` | ${cell(d.runner_project)} | ${cell(firstLine(d.error_message))} | ${d.failure_group_title ? cell(d.failure_group_title) : d.failure_group_id ? `\`${d.failure_group_id}\`` : ''} |`,
      );
    }
    if (failing.length > 100) lines.push(`| … and ${failing.length - 100} more | | | |`);
    lines.push('');
  }
  const flaky = run.flattenedSummaryDetails.filter((d) => d.status === 'flaky');
  if (flaky.length > 0)
    lines.push(
      `Flaky: ${flaky
        .map((d) => `${d.title} (${d.runner_project})`)
        .slice(0, 20)
        .join(', ')}`,
      '',
    );
  lines.push(`[Open the run's page](${t.summary_url})`, '');
  return lines.join('\n');
}
