import type { Digest } from '../digests/index.ts';
import { escapeHtml as e, mailButton, mailDocument, mailParagraph } from '../mail/index.ts';
import type { EmailMessage, TeamsMessage } from './messages.ts';
import { TEAMS_BODY_BUDGET, TEAMS_CARD_VERSION, teamsText } from './messages.ts';

type TextBlock = TeamsMessage['attachments'][number]['content']['body'][number];

// A digest as each destination takes it: a Slack message of blocks, a Teams Adaptive Card, a mail
// (HTML, every piece of data escaped, and a text part). All three say the same sections, from one
// plan of them (digestSections), each test a link to its page and each run where it turned to its.

/** Where a digest's links go: the dashboard's pages (people open them signed in). */
export interface DigestLinks {
  page: string;
  test: (testCaseId: string) => string;
  group: (groupId: string) => string;
  run: (runId: number) => string;
}

export interface DigestStory {
  project_name: string;
  digest: Digest;
  links: DigestLinks;
}

/** One line of a section: a test, its link, what the section says of it, and a run's link where it turned. */
interface Item {
  title: string;
  url: string;
  note: string;
  run: { label: string; url: string } | null;
}

interface Section {
  heading: string;
  items: Item[];
  /** How many there are, when the digest holds only the first ones (its open issues). */
  total?: number;
}

/** Lines a section lists before "and N more": the digest's own lists hold 5 or 10, what turned may hold more. */
export const DIGEST_SECTION_LIMIT = 10;

const TRACKER_NAMES = { github: 'GitHub', gitlab: 'GitLab', jira: 'Jira', linear: 'Linear' } as const;

/** An issue as its tracker names it: GitHub's and GitLab's by number (#12), Jira's and Linear's by key (OPS-12). */
export function issueName(issue: Digest['open_issues'][number]): string {
  return `${TRACKER_NAMES[issue.tracker]} ${issue.tracker === 'github' || issue.tracker === 'gitlab' ? '#' : ''}${issue.issue_key}`;
}

const percent = (rate: number | null) => (rate === null ? 'no runs' : `${Math.round(rate * 1000) / 10}% passed`);
const seconds = (ms: number | null) => (ms === null ? '–' : ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${Math.round(ms)} ms`);

const share = (rate: number) => `${Math.round(rate * 1000) / 10}%`;

const countOf = (section: Section) => section.total ?? section.items.length;
/** Lines a mail lists of a section: all it holds, up to the limit. */
const listedIn = (section: Section) => Math.min(section.items.length, DIGEST_SECTION_LIMIT);

export function digestTitle(story: DigestStory): string {
  const { digest } = story;
  const span = digest.period === 'day' ? digest.to : `${digest.from} – ${digest.to}`;
  return `${story.project_name} · ${digest.environment_name}: ${digest.period === 'day' ? 'daily' : 'weekly'} digest, ${span}`.replace(/[\r\n]+/g, ' ');
}

/** Runs and pass rate against the period before. */
export function runsLine(digest: Digest): string {
  const { runs } = digest;
  const before = digest.period === 'day' ? 'the day before' : 'the week before';
  const previous = runs.previous.runs === 0 ? 'no runs' : `${runs.previous.runs} runs, ${percent(runs.previous.pass_rate)}`;
  return `${runs.runs} runs, ${percent(runs.pass_rate)} (${before}: ${previous})`;
}

/** The digest's sections, in the order people act on them: what broke, what turned flaky, what got slower or flakier, then the rankings. */
export function digestSections(story: DigestStory): Section[] {
  const { digest, links } = story;
  const test = (t: { test_case_id: string; title: string }) => ({ title: t.title, url: links.test(t.test_case_id) });
  return [
    {
      heading: 'Turned broken',
      items: digest.turned_broken.map((t) => ({ ...test(t), note: 'failing since', run: { label: `run #${t.run_number}`, url: links.run(t.run_id) } })),
    },
    {
      heading: 'Turned flaky',
      items: digest.turned_flaky.map((t) => ({ ...test(t), note: 'first flaky in', run: { label: `run #${t.run_number}`, url: links.run(t.run_id) } })),
    },
    {
      heading: 'Got slower',
      items: digest.slower.map((t) => ({
        ...test(t),
        note: `${seconds(t.baseline_ms)} → ${seconds(t.recent_ms)}, since`,
        run: t.started_run_id === null ? null : { label: `run #${t.started_run_number}`, url: links.run(t.started_run_id) },
      })),
    },
    {
      heading: 'Got flakier',
      items: digest.flakier.map((t) => ({
        ...test(t),
        note: `flaky in ${share(t.flaky_rate)} of ${t.runs_counted} runs, was ${t.previous_flaky_rate === null ? 'not run' : share(t.previous_flaky_rate)} the 14 days before`,
        run: null,
      })),
    },
    { heading: 'Flakiest', items: digest.flakiest.map((t) => ({ ...test(t), note: `flaky in ${t.flaky_runs} of ${t.runs_counted} runs`, run: null })) },
    { heading: 'Most failing', items: digest.most_failing.map((t) => ({ ...test(t), note: `failed ${t.fail_count} of ${t.runs} runs`, run: null })) },
    { heading: 'Slowest', items: digest.slowest.map((t) => ({ ...test(t), note: `${seconds(t.mean_duration)} on average`, run: null })) },
    {
      heading: 'Open issues',
      total: digest.open_issues_total,
      items: digest.open_issues.map((issue) => ({
        title: issue.title,
        url: issue.subject_kind === 'test' ? links.test(issue.subject_id) : links.group(issue.subject_id),
        note: issue.issue_url ? 'open:' : `open: ${issueName(issue)}`,
        run: issue.issue_url ? { label: issueName(issue), url: issue.issue_url } : null,
      })),
    },
  ];
}

// Slack: Block Kit (header, sections of mrkdwn, a button), with `text` as the notification's fallback.

/** Slack's mrkdwn gives `&`, `<` and `>` meaning: escaped as its documentation says. */
const slackText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const slackLink = (url: string, label: string) => `<${slackText(url).replace(/\|/g, '%7C')}|${slackText(label).replace(/\|/g, '¦')}>`;
/** A section's text may hold 3000 characters; a header's 150. */
const SLACK_SECTION_CHARS = 3000;
const SLACK_HEADER_CHARS = 150;
const cut = (text: string, limit: number) => (text.length > limit ? `${text.slice(0, limit - 1)}…` : text);

export interface SlackDigest {
  text: string;
  blocks: (
    | { type: 'header'; text: { type: 'plain_text'; text: string } }
    | { type: 'section'; text: { type: 'mrkdwn'; text: string } }
    | { type: 'actions'; elements: { type: 'button'; text: { type: 'plain_text'; text: string }; url: string }[] }
  )[];
}

export function slackDigest(story: DigestStory): SlackDigest {
  const title = digestTitle(story);
  const blocks: SlackDigest['blocks'] = [
    { type: 'header', text: { type: 'plain_text', text: cut(title, SLACK_HEADER_CHARS) } },
    { type: 'section', text: { type: 'mrkdwn', text: slackText(runsLine(story.digest)) } },
  ];
  for (const section of digestSections(story)) {
    if (section.items.length === 0) continue;
    // Lines while the section's 3000 characters hold them (with room for "and N more"): a link is never cut in two.
    let text = `*${section.heading}* (${countOf(section)})`;
    let listed = 0;
    for (const item of section.items.slice(0, DIGEST_SECTION_LIMIT)) {
      const line = `\n• ${slackLink(item.url, cut(item.title, 200))} · ${slackText(item.note)}${item.run ? ` ${slackLink(item.run.url, item.run.label)}` : ''}`;
      if (text.length + line.length > SLACK_SECTION_CHARS - 40) break;
      text += line;
      listed++;
    }
    if (countOf(section) > listed) text += `\nand ${countOf(section) - listed} more`;
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text } });
  }
  blocks.push({ type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Open the digest' }, url: story.links.page }] });
  return { text: slackText(`${title}: ${runsLine(story.digest)}`), blocks };
}

// Teams: an Adaptive Card of TextBlocks and a button to the digest page. Unlike a run's card, each
// test is a markdown link in its TextBlock (a digest lists up to 60, too many buttons): the URLs
// are Proctor's own pages, their parentheses and spaces encoded so that none ends the link early.

/** A link in a TextBlock's markdown: its label escaped, its URL without what would end it. */
// encodeURIComponent leaves parentheses be: they are encoded by their code point.
const teamsLink = (url: string, label: string) =>
  `[${teamsText(label)}](${url.replace(/[()\s]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)})`;

export function teamsDigest(story: DigestStory): TeamsMessage {
  const body: TextBlock[] = [
    { type: 'TextBlock', text: teamsText(digestTitle(story), 400), wrap: true, size: 'Medium', weight: 'Bolder' },
    { type: 'TextBlock', text: teamsText(runsLine(story.digest)), wrap: true, spacing: 'None' },
  ];
  // Teams refuses posts over 28 KB: items are listed while the body's budget holds them, the rest counted.
  let room = TEAMS_BODY_BUDGET - Buffer.byteLength(JSON.stringify(body));
  for (const section of digestSections(story)) {
    if (section.items.length === 0) continue;
    const heading: TextBlock = {
      type: 'TextBlock',
      text: `${section.heading} (${countOf(section)})`,
      wrap: true,
      weight: 'Bolder',
      separator: true,
      spacing: 'Medium',
    };
    body.push(heading);
    room -= Buffer.byteLength(JSON.stringify(heading)) + 1;
    let listed = 0;
    for (const item of section.items.slice(0, DIGEST_SECTION_LIMIT)) {
      const run = item.run ? ` ${teamsLink(item.run.url, item.run.label)}` : '';
      const line: TextBlock = { type: 'TextBlock', text: `${teamsLink(item.url, item.title)} · ${teamsText(item.note)}${run}`, wrap: true, spacing: 'Small' };
      const size = Buffer.byteLength(JSON.stringify(line)) + 1;
      if (room - size < 200) break;
      room -= size;
      body.push(line);
      listed++;
    }
    if (countOf(section) > listed) body.push({ type: 'TextBlock', text: `and ${countOf(section) - listed} more`, wrap: true, isSubtle: true });
  }
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: TEAMS_CARD_VERSION,
          body,
          actions: [{ type: 'Action.OpenUrl', title: 'Open the digest', url: story.links.page }],
        },
      },
    ],
  };
}

// Mail: the same sections as an HTML list (every piece of data escaped) and as text.

export function emailDigest(story: DigestStory): EmailMessage {
  const subject = digestTitle(story);
  const sections = digestSections(story).filter((section) => section.items.length > 0);
  const text = [
    subject,
    runsLine(story.digest),
    '',
    ...sections.flatMap((section) => [
      `${section.heading} (${countOf(section)}):`,
      ...section.items
        .slice(0, DIGEST_SECTION_LIMIT)
        .map((item) => `- ${item.title} · ${item.note}${item.run ? ` ${item.run.label} (${item.run.url})` : ''}\n  ${item.url}`),
      ...(countOf(section) > listedIn(section) ? [`and ${countOf(section) - listedIn(section)} more`] : []),
      '',
    ]),
    `Open the digest: ${story.links.page}`,
  ].join('\n');
  const html = mailDocument(
    subject,
    `<h1 style="font-size:20px;margin:0 0 8px">${e(subject)}</h1>
${mailParagraph(runsLine(story.digest))}${sections
      .map(
        (section) =>
          `<h2 style="font-size:16px;margin:16px 0 8px">${e(section.heading)} (${countOf(section)})</h2><ul style="margin:0;padding-left:20px">${section.items
            .slice(0, DIGEST_SECTION_LIMIT)
            .map(
              (item) =>
                `<li><a href="${e(item.url)}">${e(item.title)}</a> · ${e(item.note)}${item.run ? ` <a href="${e(item.run.url)}">${e(item.run.label)}</a>` : ''}</li>`,
            )
            .join('')}</ul>${countOf(section) > listedIn(section) ? mailParagraph(`and ${countOf(section) - listedIn(section)} more`, true) : ''}`,
      )
      .join('')}${mailButton(story.links.page, 'Open the digest')}`,
  );
  return { subject, text, html };
}
