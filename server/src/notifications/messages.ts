import { escapeHtml as e, mailButton, mailDocument, mailParagraph } from '../mail/index.ts';
import { isWebUrl } from '../xml.ts';
import type { LabelledFailure, RunStory } from './compose.ts';

// A run's story as each destination takes it: a Slack message, a webhook's JSON event, a mail.

/** Failures a Slack message lists before "and N more". */
export const SLACK_FAILURE_LIMIT = 15;

const STATE_ICON: Record<string, string> = { passed: ':white_check_mark:', failed: ':x:', error: ':warning:', cancelled: ':no_entry_sign:' };

/** Slack's mrkdwn gives `&`, `<` and `>` meaning: escaped as its documentation says. */
function slackText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A URL inside Slack's `<url|label>`: its `&`, `<` and `>` escaped, and a `|` (which would end it) encoded. */
function slackUrl(url: string): string {
  return slackText(url).replace(/\|/g, '%7C');
}

/** The CI job's page, when it is a web address a message may link. */
function ciJobUrl(story: RunStory): string | null {
  const url = story.run.ci_job_url;
  return url && isWebUrl(url) ? url : null;
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
    `${STATE_ICON[run.state] ?? ''} *${slackText(run.project_name)}*: run #${run.number} ${run.state} in ${place}`.trim(),
    `${counts} · <${run.summary_url}|Open the run>${ciJobUrl(story) ? ` · <${slackUrl(ciJobUrl(story) as string)}|CI job>` : ''}`,
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

/** Failures an email lists before "and N more". */
export const EMAIL_FAILURE_LIMIT = 50;

/** An email's subject and parts; the recipients are the destination's, read at each attempt. */
export interface EmailMessage {
  subject: string;
  text: string;
  html: string;
}

/** A mail of the run's ending: the state, counts, environment, branch, commit, a link, the failures labelled (new first). */
export function emailMessage(story: RunStory): EmailMessage {
  const { run, failures } = story;
  const place = [run.environment_name, run.branch ? `branch ${run.branch}` : null, run.commit ? `commit ${run.commit.slice(0, 12)}` : null]
    .filter(Boolean)
    .join(' · ');
  const counts = `${run.success_count} passed · ${run.failed_count} failed · ${run.flaky_count} flaky · ${run.skipped_count} skipped${run.snoozed_count ? ` (${run.snoozed_count} snoozed)` : ''}`;
  const subject = `${run.project_name}: run #${run.number} ${run.state} in ${run.environment_name}${run.branch ? ` (${run.branch})` : ''}`.replace(
    /[\r\n]+/g,
    ' ',
  );
  const listed = failures.slice(0, EMAIL_FAILURE_LIMIT);
  const more = failures.length - listed.length;
  const where = (f: LabelledFailure) => [f.file_path, f.runner_project].filter(Boolean).join(' · ');
  const describe = (f: LabelledFailure) =>
    `${f.failure_category !== 'unknown' ? ` [${f.failure_category}]` : ''}${f.failure_group_title ? `: ${f.failure_group_title}` : ''}`;
  const text = [
    `${run.project_name}: run #${run.number} ${run.state}`,
    place,
    counts,
    '',
    `Open the run: ${run.summary_url}`,
    ...(ciJobUrl(story) ? [`CI job: ${ciJobUrl(story)}`] : []),
    ...(listed.length > 0
      ? [
          '',
          'Failed tests:',
          ...listed.map((f) => `- ${f.label}: ${f.title}${where(f) ? ` (${where(f)})` : ''}${describe(f)}`),
          ...(more > 0 ? [`and ${more} more`] : []),
        ]
      : []),
  ].join('\n');
  const rows = listed
    .map(
      (f) =>
        `<tr><td style="padding:4px 8px;border-bottom:1px solid #d0d7de"><strong>${e(f.label)}</strong></td><td style="padding:4px 8px;border-bottom:1px solid #d0d7de">${e(f.title)}${
          where(f) ? `<br><span style="color:#57606a;font-size:13px">${e(where(f))}</span>` : ''
        }${describe(f) ? `<br><span style="font-size:13px">${e(describe(f).replace(/^: /, ''))}</span>` : ''}</td></tr>`,
    )
    .join('');
  const html = mailDocument(
    subject,
    `<h1 style="font-size:20px;margin:0 0 8px">${e(run.project_name)}: run #${run.number} ${e(run.state)}</h1>
${mailParagraph(place)}${mailParagraph(counts)}${mailButton(run.summary_url, 'Open the run')}${
      ciJobUrl(story) ? `<p style="margin:0 0 12px"><a href="${e(ciJobUrl(story) as string)}" rel="noreferrer">CI job</a></p>` : ''
    }${
      listed.length > 0
        ? `<h2 style="font-size:16px;margin:16px 0 8px">Failed tests</h2><table style="border-collapse:collapse;width:100%">${rows}</table>${more > 0 ? mailParagraph(`and ${more} more`, true) : ''}`
        : ''
    }`,
  );
  return { subject, text, html };
}
