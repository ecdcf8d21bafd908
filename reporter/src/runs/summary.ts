import { markdownCode, markdownCodeBlock, markdownText } from '../text/markdown.ts';
import type { RunSummaryDetail, RunView } from './client.ts';
import { runName } from './name.ts';

// What a run's tests and repositories said (titles, file paths, projects, errors, failure groups'
// titles, the branch, the environment's name) is quoted through ../text/markdown.ts in the job summary:
// a hostile title injects no HTML, link or mention, and an error cannot close its code block.

const ICONS: Record<string, string> = { passed: '✅', failed: '❌', error: '⚠️', cancelled: '⏹️' };

function firstLine(text: string | null): string {
  return (
    (text ?? '')
      .split('\n')
      .find((line) => line.trim())
      ?.trim()
      .slice(0, 200) ?? ''
  );
}

/** A link's destination that no space, parenthesis or angle bracket in the URL can end early. */
function destination(url: string): string {
  return url.replace(/[\s()<>]/g, (c) => encodeURIComponent(c));
}

/** GitHub's job summary (Markdown): the outcome, a table of counts, the failing tests with their failure groups, the link. */
export function jobSummary(run: RunView, note: string | null): string {
  const t = run.testRun;
  const branch = t.test_run_branch ? `, branch ${markdownCode(t.test_run_branch)}` : '';
  const lines = [
    `## ${ICONS[t.state] ?? ''} ${markdownText(`Proctor ${runName(t)}: ${t.state}`)} on ${markdownText(t.environment_name)}${branch}`,
    '',
    ...(note ? [markdownText(note), ''] : []),
    '| Total | Passed | Failed | Flaky | Skipped | Duration |',
    '|---:|---:|---:|---:|---:|---:|',
    `| ${t.total_count} | ${t.success_count} | ${t.failed_count} | ${t.flaky_count} | ${t.skipped_count} | ${t.duration === null ? '–' : `${(t.duration / 1000).toFixed(1)} s`} |`,
    '',
  ];
  const reason = t.error_reason ?? t.cancel_reason ?? null;
  if (reason) lines.push(...markdownCodeBlock(reason.slice(0, 2000).split('\n')), '');
  const failing = failingTests(run);
  if (failing.length > 0) {
    // In a table, text rather than code spans: GFM splits cells at a `|` even inside a code span.
    lines.push('### Failing tests', '', '| Test | Project | Error | Failure group |', '|---|---|---|---|');
    for (const d of failing.slice(0, 100)) {
      const snoozed = d.snoozed ? ' (snoozed)' : '';
      const group = d.failure_group_title || d.failure_group_id || '';
      lines.push(
        `| ${markdownText(d.title)}${snoozed}<br>${markdownText(d.file_path)} | ${markdownText(d.runner_project)} | ${markdownText(firstLine(d.error_message))} | ${markdownText(group)} |`,
      );
    }
    if (failing.length > 100) lines.push(`| … and ${failing.length - 100} more | | | |`);
    lines.push('');
  }
  const flaky = flakyLine(run, markdownText);
  if (flaky) lines.push(flaky, '');
  lines.push(`[Open the run's page](${destination(t.summary_url)})`, '');
  return lines.join('\n');
}

function failingTests(run: RunView): RunSummaryDetail[] {
  return run.flattenedSummaryDetails.filter((d) => d.status === 'failed');
}

/** The flaky tests on one line; `quote` is how their titles and projects are written (quoted for Markdown). */
function flakyLine(run: RunView, quote: (text: string) => string = (text) => text): string | null {
  const flaky = run.flattenedSummaryDetails.filter((d) => d.status === 'flaky');
  if (flaky.length === 0) return null;
  return `Flaky: ${flaky
    .map((d) => `${quote(d.title)} (${quote(d.runner_project)})`)
    .slice(0, 20)
    .join(', ')}${flaky.length > 20 ? ` and ${flaky.length - 20} more` : ''}`;
}

function counts(run: RunView): string {
  const t = run.testRun;
  return `${t.success_count} passed, ${t.failed_count} failed, ${t.flaky_count} flaky, ${t.skipped_count} skipped`;
}

/** The summary a terminal shows: the outcome, the failing tests with their failure groups, the flaky ones, the link. */
export function textSummary(run: RunView): string {
  const t = run.testRun;
  const duration = t.duration === null ? '' : ` in ${(t.duration / 1000).toFixed(1)} s`;
  const lines = [`Proctor ${runName(t)} ${t.state} on ${t.environment_name}: ${t.total_count} tests, ${counts(run)}${duration}`];
  const reason = t.error_reason ?? t.cancel_reason ?? null;
  if (reason)
    lines.push(
      ...reason
        .slice(0, 2000)
        .split('\n')
        .map((line) => `  ${line}`),
    );
  const failing = failingTests(run);
  if (failing.length > 0) lines.push('', 'Failing tests:');
  for (const d of failing.slice(0, 100)) {
    lines.push(`  ✗ ${d.title} (${d.runner_project}) ${d.file_path}${d.snoozed ? ' [snoozed]' : ''}`);
    const group = d.failure_group_title ?? d.failure_group_id;
    if (group) lines.push(`      failure group: ${group}`);
    const error = firstLine(d.error_message);
    if (error) lines.push(`      ${error}`);
  }
  if (failing.length > 100) lines.push(`  … and ${failing.length - 100} more`);
  const flaky = flakyLine(run);
  if (flaky) lines.push('', flaky);
  lines.push('', t.summary_url);
  return lines.join('\n');
}

/** How a waiter ends on a run that ended: exit code 0 passed, 1 failed (or flaky with failOnFlaky, or stopped by fail fast), 2 error or cancelled. */
export interface Verdict {
  exitCode: 0 | 1 | 2;
  message: string;
}

export function runVerdict(run: RunView, failOnFlaky: boolean): Verdict {
  const t = run.testRun;
  if (t.state === 'passed' && failOnFlaky && t.flaky_count > 0) {
    return { exitCode: 1, message: `Proctor ${runName(t)} passed with ${t.flaky_count} flaky test(s), and fail-on-flaky is set. ${t.summary_url}` };
  }
  if (t.state === 'passed') return { exitCode: 0, message: `Proctor ${runName(t)} passed: ${counts(run)}` };
  const why = t.error_reason ?? t.cancel_reason ?? null;
  const reason = why ? ` (${why.split('\n')[0]})` : '';
  // Fail fast stopped it: its tests failed, which is what exit code 1 says, not a cancel from outside.
  const failed = t.state === 'failed' || (t.state === 'cancelled' && t.cancelled_by === 'max_failures');
  return { exitCode: failed ? 1 : 2, message: `Proctor ${runName(t)} ${t.state}: ${counts(run)}${reason}. ${t.summary_url}` };
}
