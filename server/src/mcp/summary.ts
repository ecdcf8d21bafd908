import type { readRun } from './reads.ts';

// A run as Markdown, to paste into an issue, a chat or an assistant's context: the counts, then
// each failure with its error's first lines, where it failed and its failure group.

type RunRead = Awaited<ReturnType<typeof readRun>>;

/** Markdown's own inline characters in text from a test are shown as they are (a line never starts with the text). */
function text(value: string): string {
  return value.replace(/[\\`*_[\]<>|]/g, (c) => `\\${c}`);
}

function errorLines(error: string | null): string[] {
  if (!error) return [];
  const lines = error
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(0, 8);
  // A fence longer than any run of backticks in the error keeps it whole.
  const fence = '`'.repeat(Math.max(3, ...[...error.matchAll(/`+/g)].map((m) => m[0].length + 1)));
  return [fence, ...lines, fence];
}

export function runMarkdown(read: RunRead): string {
  const { run } = read;
  const c = run.counts;
  const lines = [
    `# Run #${run.id}: ${run.state}`,
    '',
    `Environment **${text(run.environment)}**${run.branch ? `, branch \`${run.branch.replace(/`/g, '')}\`` : ''}${run.commit ? `, commit \`${run.commit.slice(0, 12)}\`` : ''}${run.pull_request ? `, pull request ${run.pull_request}` : ''}.`,
    '',
    `${c.total} tests: ${c.passed} passed, ${c.failed} failed, ${c.flaky} flaky, ${c.skipped} skipped${c.snoozed > 0 ? ` (${c.snoozed} failures snoozed)` : ''}.`,
    '',
    `[The run's page](${run.url})`,
  ];
  if (run.error_reason) lines.push('', '**Why it ended so:**', ...errorLines(run.error_reason));
  if (read.failures.length > 0) lines.push('', `## Failures (${read.failures_total})`);
  for (const failure of read.failures) {
    const where = [failure.location ?? failure.file, failure.runner_project].filter(Boolean).map((part) => text(part as string));
    const labels = [failure.status, failure.category, failure.since_previous_run, failure.snoozed ? 'snoozed' : null].filter(Boolean).join(', ');
    lines.push('', `### ${text(failure.title)} (${labels})`, '', where.join(' · '));
    if (failure.stack.length > 0) lines.push('', `Stack, in the suite's files: ${failure.stack.map((frame) => text(frame)).join(', ')}`);
    if (failure.failure_group) lines.push('', `Failure group: ${text(failure.failure_group.title ?? failure.failure_group.id)}`);
    lines.push('', ...errorLines(failure.error));
  }
  if (read.pages > 1) lines.push('', `…and more failures on ${read.pages - 1} more page(s) of get_run.`);
  return `${lines.join('\n')}\n`;
}
