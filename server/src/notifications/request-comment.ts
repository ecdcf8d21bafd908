import { markdownCode, markdownText } from '@proctor/reporter/markdown';
import type { LabelledFailure, RunStory } from './compose.ts';
import type { VisualLine } from './visual-status-store.ts';

// The comment a GitHub destination keeps on a pull request and a GitLab one as a note on a merge
// request: one per request, a section per environment, each run's failures labelled and held against
// the latest run of the branch the request merges into (which of them the branch brought). What
// tests and repositories said (titles, paths, branches, failure groups) is quoted through
// @proctor/reporter/markdown: a hostile title mentions no one and injects no HTML or link.

/** How the host names the request, and the branch its failures are held against. */
export interface Host {
  request: 'pull request' | 'merge request';
  base: 'the default branch' | 'the target branch';
}

const COMMENT_FAILURE_LIMIT = 30;

/** Where the destination's comment is found again when its id was lost (a crash between its creation and the commit). */
export function marker(destinationId: number): string {
  return `<!-- proctor:destination=${destinationId} -->`;
}

export function countsLine({ run }: RunStory): string {
  return `${run.success_count} passed, ${run.failed_count} failed, ${run.flaky_count} flaky, ${run.skipped_count} skipped`;
}

/** A commit's first 12 characters: plain when hexadecimal (GitHub and GitLab link it to the commit), else quoted as code. */
function commitText(commit: string): string {
  const short = commit.slice(0, 12);
  return /^[0-9a-f]+$/i.test(short) ? short : markdownCode(short);
}

/** A user or team as GitHub and GitLab mention them (`@user`, `@org/team`, `@group/subgroup`); anything else is no mention. */
const MENTIONABLE = /^@[A-Za-z0-9][A-Za-z0-9_.-]*(\/[A-Za-z0-9][A-Za-z0-9_.-]*)*$/;

/**
 * The owners of the failures the branch brought (of every failure when there is no run of the base
 * branch to compare with), each mentioned once; owners that are no mention (an e-mail address, a
 * GitLab role) are named as text.
 */
function ownersLine(failures: LabelledFailure[]): string | null {
  const owners = [...new Set(failures.flatMap((failure) => failure.owners))];
  if (owners.length === 0) return null;
  return `Owners of these failures: ${owners.map((owner) => (MENTIONABLE.test(owner) ? owner : markdownCode(owner))).join(' ')}`;
}

function failureItem(failure: LabelledFailure, brought: boolean | null, host: Host): string {
  const where = [failure.file_path, failure.runner_project].filter(Boolean).map(markdownText).join(' · ');
  const origin = brought === null ? '' : brought ? ' · **brought by this branch**' : ` · also fails on ${host.base}`;
  const kind = failure.failure_category !== 'unknown' ? ` \\[${failure.failure_category}\\]` : '';
  const what = failure.failure_group_title ? `: ${markdownText(failure.failure_group_title)}` : '';
  return `- **${failure.label}** ${markdownText(failure.title)}${where ? ` (${where})` : ''}${kind}${what}${origin}`;
}

/**
 * The run's visual changes as the visual review last told them (`visual`) (how many await review, were
 * approved, rejected; the committed baselines' proof), with the review page's link. The visual
 * review writes the text (numbers, a commit's hexadecimal name, run numbers): no quoting is needed.
 */
function visualLine(story: RunStory, visual: VisualLine): string {
  const own = visual.run_id === story.run.id;
  // Another run's line (an earlier run of the branch, whose baselines this one may prove): its review page, its number.
  const reviewUrl = story.visual_review_url ? story.visual_review_url.replace(/\/runs\/\d+\/visual$/, `/runs/${visual.run_id}/visual`) : null;
  return `**Visual changes${own ? '' : ` of run ${markdownText(`#${visual.run_number}`)}`}:** ${visual.line}${reviewUrl ? ` ([review](${reviewUrl}))` : ''}.`;
}

export function section(
  story: RunStory,
  baseBranch: string,
  onBase: { runNumber: number; failed: Set<string> } | null,
  host: Host,
  visual: VisualLine | null = null,
): string {
  const { run, failures } = story;
  const lines = [
    `### ${markdownText(run.environment_name)}: ${run.state}`,
    `[Run #${run.number}](${run.summary_url})${run.commit ? ` on ${commitText(run.commit)}` : ''}: ${countsLine(story)}.`,
  ];
  if (failures.length > 0) {
    const failing = failures.filter((f) => f.label !== 'flaky');
    const brought = onBase ? failing.filter((f) => !onBase.failed.has(f.test_case_id)).length : null;
    lines.push(
      '',
      onBase
        ? `${brought} of ${failing.length} failures are not on ${markdownCode(baseBranch)} (compared with its run ${markdownText(`#${onBase.runNumber}`)}):`
        : `No run of ${markdownCode(baseBranch)} in this environment to compare with:`,
      ...failures.slice(0, COMMENT_FAILURE_LIMIT).map((f) => failureItem(f, onBase && f.label !== 'flaky' ? !onBase.failed.has(f.test_case_id) : null, host)),
    );
    if (failures.length > COMMENT_FAILURE_LIMIT) lines.push(`- and ${failures.length - COMMENT_FAILURE_LIMIT} more`);
    const owners = ownersLine(onBase ? failing.filter((f) => !onBase.failed.has(f.test_case_id)) : failing);
    if (owners) lines.push('', owners);
  }
  if (visual) lines.push('', visualLine(story, visual));
  return lines.join('\n');
}

export function commentBody(destinationId: number, sections: Record<string, string>, host: Host): string {
  const ordered = Object.keys(sections)
    .sort()
    .map((slug) => sections[slug]);
  return [
    marker(destinationId),
    '## Proctor',
    '',
    ...ordered.flatMap((text) => [text, '']),
    `<sub>Edited in place by each run of this ${host.request}.</sub>`,
  ].join('\n');
}
