import { escapeHtml as e, mailButton, mailDocument, mailParagraph } from '../mail/index.ts';
import { isWebUrl } from '../xml.ts';
import type { LabelledFailure, RunStory } from './compose.ts';

// A run's story as each destination takes it: a Slack message, a Teams card, a webhook's JSON event, a mail.

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

/** What an owners delivery says it lists: the failures of the owners its rules name. */
export function routedLine(owners: string[]): string {
  return `Failures owned by ${owners.join(', ')}`;
}

/**
 * An incoming webhook's message: the state, counts, environment, branch, commit, a link, the
 * failures labelled (new first); `routedTo`: an owners delivery, listing only those owners' failures.
 */
export function slackMessage(story: RunStory, routedTo: string[] | null = null): { text: string } {
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
  if (routedTo) lines.push(slackText(routedLine(routedTo)));
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
export function emailMessage(story: RunStory, routedTo: string[] | null = null): EmailMessage {
  const { run, failures } = story;
  const place = [run.environment_name, run.branch ? `branch ${run.branch}` : null, run.commit ? `commit ${run.commit.slice(0, 12)}` : null]
    .filter(Boolean)
    .join(' · ');
  const counts = `${run.success_count} passed · ${run.failed_count} failed · ${run.flaky_count} flaky · ${run.skipped_count} skipped${run.snoozed_count ? ` (${run.snoozed_count} snoozed)` : ''}`;
  const routed = routedTo ? routedLine(routedTo) : null;
  const subject =
    `${run.project_name}: run #${run.number} ${run.state} in ${run.environment_name}${run.branch ? ` (${run.branch})` : ''}${routed ? ` · ${routed}` : ''}`.replace(
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
    ...(routed ? [routed] : []),
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
${mailParagraph(place)}${mailParagraph(counts)}${routed ? mailParagraph(routed) : ''}${mailButton(run.summary_url, 'Open the run')}${
      ciJobUrl(story) ? `<p style="margin:0 0 12px"><a href="${e(ciJobUrl(story) as string)}" rel="noreferrer">CI job</a></p>` : ''
    }${
      listed.length > 0
        ? `<h2 style="font-size:16px;margin:16px 0 8px">Failed tests</h2><table style="border-collapse:collapse;width:100%">${rows}</table>${more > 0 ? mailParagraph(`and ${more} more`, true) : ''}`
        : ''
    }`,
  );
  return { subject, text, html };
}

/** Failures a Teams card lists before "and N more", as Slack's message does. */
export const TEAMS_FAILURE_LIMIT = 15;

/** Characters of one piece of user data (a title, a group's title) a card keeps: Teams takes posts of up to 28 KB. */
const TEAMS_TEXT_LIMIT = 300;

/** Bytes the card's body may take in JSON: Teams refuses posts over 28 KB, and the rest of the message (links included) has the remainder. */
export const TEAMS_BODY_BUDGET = 20_000;

const TEAMS_STATE_ICON: Record<string, string> = { passed: '✅', failed: '❌', error: '⚠️', cancelled: '🚫' };

/** The version a card asks of Teams: what it uses (TextBlock, Action.OpenUrl) is in 1.0; 1.4 is Teams' floor on every client. */
export const TEAMS_CARD_VERSION = '1.4';

/**
 * User data in a TextBlock, which reads a subset of markdown (bold, italic, lists, links) and
 * `{{DATE(…)}}` and `{{TIME(…)}}` functions: on one line, shortened, and every character that could
 * start markup escaped with a backslash, as CommonMark escapes it; a line-opening list marker too.
 */
export function teamsText(text: string, limit = TEAMS_TEXT_LIMIT): string {
  const line = text.replace(/\s*[\r\n]+\s*/g, ' ');
  const short = line.length > limit ? `${line.slice(0, limit - 1)}…` : line;
  return short
    .replace(/[\\`*_~[\]()<>#|{}!]/g, '\\$&')
    .replace(/^([-+])/, '\\$1')
    .replace(/^(\d+)([.)])/, '$1\\$2');
}

interface TextBlock {
  type: 'TextBlock';
  text: string;
  wrap: true;
  size?: 'Medium';
  weight?: 'Bolder';
  isSubtle?: true;
  spacing?: 'None' | 'Small' | 'Medium';
  separator?: true;
}

interface OpenUrl {
  type: 'Action.OpenUrl';
  title: string;
  url: string;
}

/** What a Teams Workflows webhook takes: a message whose one attachment is an Adaptive Card. */
export interface TeamsMessage {
  type: 'message';
  attachments: {
    contentType: 'application/vnd.microsoft.card.adaptive';
    contentUrl: null;
    content: { $schema: string; type: 'AdaptiveCard'; version: string; body: TextBlock[]; actions: OpenUrl[] };
  }[];
}

function teamsFailureLine(failure: LabelledFailure): TextBlock {
  const where = [failure.file_path, failure.runner_project].filter(Boolean).join(' · ');
  const kind = failure.failure_category !== 'unknown' ? ` \\[${failure.failure_category}\\]` : '';
  const what = failure.failure_group_title ? `: ${teamsText(failure.failure_group_title)}` : '';
  return {
    type: 'TextBlock',
    text: `**${failure.label}** ${teamsText(failure.title)}${where ? ` _(${teamsText(where)})_` : ''}${kind}${what}`,
    wrap: true,
    spacing: 'Small',
  };
}

/**
 * A Teams Workflows webhook's message: an Adaptive Card with the state, counts, environment,
 * branch, commit, the failures labelled (new first) and buttons to the run and the CI job: what
 * Slack's message says. The chat account a Slack message mentions is Slack's: a card mentions nobody.
 */
export function teamsMessage(story: RunStory, routedTo: string[] | null = null): TeamsMessage {
  const { run, failures } = story;
  const place = [
    `**${teamsText(run.environment_name)}**`,
    run.branch ? `branch ${teamsText(run.branch)}` : null,
    run.commit ? `commit ${teamsText(run.commit.slice(0, 12))}` : null,
  ]
    .filter(Boolean)
    .join(' · ');
  const counts = `${run.success_count} passed · ${run.failed_count} failed · ${run.flaky_count} flaky · ${run.skipped_count} skipped${run.snoozed_count ? ` (${run.snoozed_count} snoozed)` : ''}`;
  const body: TextBlock[] = [
    {
      type: 'TextBlock',
      text: `${TEAMS_STATE_ICON[run.state] ?? ''} **${teamsText(run.project_name)}**: run #${run.number} ${teamsText(run.state)}`.trim(),
      wrap: true,
      size: 'Medium',
    },
    { type: 'TextBlock', text: place, wrap: true, spacing: 'None' },
    { type: 'TextBlock', text: counts, wrap: true, isSubtle: true, spacing: 'None' },
  ];
  if (routedTo) body.push({ type: 'TextBlock', text: teamsText(routedLine(routedTo), 1000), wrap: true, spacing: 'Small' });
  if (failures.length > 0) {
    body.push({ type: 'TextBlock', text: 'Failed tests', wrap: true, weight: 'Bolder', separator: true, spacing: 'Medium' });
    // Up to 15 failures, fewer when their text (escaped, then in JSON) would take the post past its budget.
    const lines = failures.slice(0, TEAMS_FAILURE_LIMIT).map(teamsFailureLine);
    let room = TEAMS_BODY_BUDGET - Buffer.byteLength(JSON.stringify(body));
    let listed = 0;
    for (const line of lines) {
      room -= Buffer.byteLength(JSON.stringify(line)) + 1;
      if (room < 0) break;
      listed++;
    }
    body.push(...lines.slice(0, listed));
    if (failures.length > listed) body.push({ type: 'TextBlock', text: `and ${failures.length - listed} more`, wrap: true, isSubtle: true });
  }
  const ciJob = ciJobUrl(story);
  const actions: OpenUrl[] = [{ type: 'Action.OpenUrl', title: 'Open the run', url: run.summary_url }];
  if (ciJob) actions.push({ type: 'Action.OpenUrl', title: 'CI job', url: ciJob });
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: { $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: TEAMS_CARD_VERSION, body, actions },
      },
    ],
  };
}
