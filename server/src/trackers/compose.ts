import type { SubjectKind } from './schema.ts';
import type { Sighting, SubjectStory } from './follow-store.ts';
import { markerComment } from './tracker.ts';

// The texts Proctor posts on a tracker, in Markdown: an issue made from a failure group or a test
// (its title, its error, its recent history, the runs where it failed, a link back), and the
// comments that keep it in step with the test.

/** Where a link's subject and its runs are on the dashboard. */
export interface Pages {
  subject(kind: SubjectKind, id: string): string;
  run(runId: number): string;
}

const ERROR_LINES = 30;
const escapeCell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** An error in a fenced block, cut to its first lines, with a fence longer than any it holds. */
function errorBlock(error: string): string {
  const lines = error.split('\n');
  const shown = lines.slice(0, ERROR_LINES).join('\n') + (lines.length > ERROR_LINES ? `\n… (${lines.length - ERROR_LINES} more lines)` : '');
  const fence = '`'.repeat(Math.max(3, ...[...shown.matchAll(/`+/g)].map((m) => m[0].length + 1)));
  return `${fence}\n${shown}\n${fence}`;
}

const sightingLine = (s: Sighting, pages: Pages) =>
  `| [#${s.run_number}](${pages.run(s.run_id)}) | ${escapeCell(s.environment)} | ${escapeCell(s.branch ?? '')} | ${s.outcome} | ${s.at ? new Date(s.at).toISOString().slice(0, 16).replace('T', ' ') : ''} |`;

export function issueText(kind: SubjectKind, id: string, story: SubjectStory, marker: string, pages: Pages): { title: string; body: string } {
  const what = kind === 'failure_group' ? 'Failure group' : 'Test';
  const title = kind === 'failure_group' ? `Failing: ${story.title}` : `Flaky or failing test: ${story.title}`;
  const lines = [
    `**${what}** [${escapeCell(story.title)}](${pages.subject(kind, id)}), tracked by Proctor: this issue is reopened when it fails again and commented on once it passes.`,
    '',
  ];
  if (story.error) lines.push('### Error', '', errorBlock(story.error), '');
  if (kind === 'failure_group' && story.tests.length > 0) {
    lines.push('### Tests', '', ...story.tests.map((t) => `- ${t.title}${t.file_path ? ` (\`${t.file_path}\`)` : ''}`), '');
  }
  const history = story.history.length > 0 ? story.history : story.failing;
  if (history.length > 0) {
    lines.push(kind === 'failure_group' ? '### Runs where it failed' : '### Recent history', '');
    lines.push('| Run | Environment | Branch | Outcome | Ended (UTC) |', '|---|---|---|---|---|', ...history.map((s) => sightingLine(s, pages)), '');
  }
  lines.push(`[Open in Proctor](${pages.subject(kind, id)})`, '', markerComment('link', marker));
  return { title, body: lines.join('\n') };
}

export function failingComment(
  kind: SubjectKind,
  id: string,
  run: { id: number; number: number; branch: string | null },
  pages: Pages,
  reopening: boolean,
): string {
  const what = kind === 'failure_group' ? 'This failure' : 'This test';
  return [
    `${what} failed again in [run #${run.number}](${pages.run(run.id)})${run.branch ? ` of \`${run.branch}\`` : ''}${reopening ? ': Proctor reopens the issue' : ', while the issue is closed'}.`,
    '',
    `[Open in Proctor](${pages.subject(kind, id)})`,
  ].join('\n');
}

export function passingComment(
  kind: SubjectKind,
  id: string,
  passes: number,
  run: { id: number; number: number; branch: string | null },
  pages: Pages,
): string {
  const what = kind === 'failure_group' ? "This failure's tests" : 'This test';
  return [
    `${what} passed the last ${passes} runs${run.branch ? ` of \`${run.branch}\`` : ''} in a row, the latest [run #${run.number}](${pages.run(run.id)}).`,
    '',
    `[Open in Proctor](${pages.subject(kind, id)})`,
  ].join('\n');
}

/** The dashboard's pages of a project, at the server's public URL. */
export function pagesOf(publicUrl: string, projectId: number): Pages {
  const project = `${publicUrl}/projects/${projectId}`;
  return {
    subject: (kind, id) => (kind === 'failure_group' ? `${project}/failure-groups/${encodeURIComponent(id)}` : `${project}/tests/${id}`),
    run: (runId) => `${project}/runs/${runId}`,
  };
}
