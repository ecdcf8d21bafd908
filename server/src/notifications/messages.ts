import type { LabelledFailure, RunStory } from './compose.ts';

// A run's story as each destination takes it: a Slack message, a webhook's JSON event.

/** Failures a Slack message lists before "and N more". */
export const SLACK_FAILURE_LIMIT = 15;

const STATE_ICON: Record<string, string> = { passed: ':white_check_mark:', failed: ':x:', error: ':warning:', cancelled: ':no_entry_sign:' };

/** Slack's mrkdwn gives `&`, `<` and `>` meaning: escaped as its documentation says. */
function slackText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function failureLine(failure: LabelledFailure): string {
  const where = [failure.file_path, failure.runner_project].filter(Boolean).join(' · ');
  const kind = failure.failure_category !== 'unknown' ? ` [${failure.failure_category}]` : '';
  const what = failure.failure_group_title ? `: ${slackText(failure.failure_group_title)}` : '';
  return `• *${failure.label}* ${slackText(failure.title)}${where ? ` _(${slackText(where)})_` : ''}${kind}${what}`;
}

/** An incoming webhook's message: the state, counts, environment, branch, commit, a link, the failures labelled (new first). */
export function slackMessage(story: RunStory): { text: string } {
  const { run, failures } = story;
  const place = [
    `*${slackText(run.environment_name)}*`,
    run.branch ? `branch \`${slackText(run.branch)}\`` : null,
    run.commit ? `commit \`${slackText(run.commit.slice(0, 12))}\`` : null,
  ]
    .filter(Boolean)
    .join(' · ');
  const counts = `${run.success_count} passed · ${run.failed_count} failed · ${run.flaky_count} flaky · ${run.skipped_count} skipped${run.snoozed_count ? ` (${run.snoozed_count} snoozed)` : ''}`;
  const lines = [
    `${STATE_ICON[run.state] ?? ''} *${slackText(run.project_name)}*: run #${run.id} ${run.state} in ${place}`.trim(),
    `${counts} · <${run.summary_url}|Open the run>`,
  ];
  if (story.mention) lines.push(`<@${story.mention}>`);
  if (failures.length > 0) {
    lines.push('', '*Failed tests*', ...failures.slice(0, SLACK_FAILURE_LIMIT).map(failureLine));
    if (failures.length > SLACK_FAILURE_LIMIT) lines.push(`and ${failures.length - SLACK_FAILURE_LIMIT} more`);
  }
  return { text: lines.join('\n') };
}

export interface WebhookEvent {
  id: string;
  type: 'test_run.ended';
  created_at: string;
  test_run: RunStory['run'];
  failures: LabelledFailure[];
}

export function webhookEvent(story: RunStory, eventId: string, createdAt: Date): WebhookEvent {
  return { id: eventId, type: 'test_run.ended', created_at: createdAt.toISOString(), test_run: story.run, failures: story.failures };
}
