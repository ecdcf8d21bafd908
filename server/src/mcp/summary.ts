import { markdownCode, markdownCodeBlock, markdownText as text } from '@proctor/reporter/markdown';
import type { readRun } from './reads.ts';

// A run as Markdown, to paste into an issue, a chat or an assistant's context: the counts, then
// each failure with its error's first lines, where it failed and its failure group. Everything the
// run's reporter or its tests said is quoted through @proctor/reporter/markdown.

type RunRead = Awaited<ReturnType<typeof readRun>>;

function errorLines(error: string | null): string[] {
  if (!error) return [];
  const lines = error
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(0, 8);
  return markdownCodeBlock(lines);
}

export function runMarkdown(read: RunRead): string {
  const { run } = read;
  const c = run.counts;
  const lines = [
    // Pasted into an issue, a bare `#7` would be a reference to issue 7: the run's number is quoted too.
    `# Run ${text(`#${run.number}`)}: ${run.state}`,
    '',
    `Environment **${text(run.environment)}**${run.branch ? `, branch ${markdownCode(run.branch)}` : ''}${run.commit ? `, commit ${markdownCode(run.commit.slice(0, 12))}` : ''}${run.pull_request ? `, pull request ${run.pull_request}` : ''}.`,
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
