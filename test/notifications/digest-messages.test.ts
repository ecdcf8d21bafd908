import { describe, expect, it } from 'vitest';
import type { Digest } from '../../server/src/digests/index.ts';
import { type DigestStory, emailDigest, slackDigest, teamsDigest } from '../../server/src/notifications/digest-messages.ts';
import { ownerMatches } from '../../server/src/notifications/routing.ts';
import { latestDue, nextDue } from '../../server/src/notifications/schedule.ts';
import { cardProblems } from '../helpers/teams.ts';

// A digest's messages at their limits, owner patterns and schedule moments, without a server.

const LONG = `${'*[x](https://evil.example) <b>&'.repeat(80)}`;

function story(count: number): DigestStory {
  const test = (n: number) => ({ test_case_id: `${String(n).padStart(20, '0')}-${'a'.repeat(20)}`, title: `${n} ${LONG}`, file_path: 'a.spec.ts' });
  const many = <T>(make: (n: number) => T) => Array.from({ length: count }, (_, n) => make(n));
  const digest: Digest = {
    environment_id: 1,
    environment_name: 'nightly',
    period: 'week',
    from: '2026-10-27',
    to: '2026-11-02',
    runs: { runs: 10, passed_runs: 5, pass_rate: 0.5, previous: { runs: 10, passed_runs: 10, pass_rate: 1 } },
    turned_flaky: many((n) => ({ ...test(n), run_id: n, run_number: n })),
    turned_broken: many((n) => ({ ...test(n + 100), run_id: n, run_number: n })),
    flakiest: many((n) => ({ ...test(n + 200), score: 0.5, flaky_runs: 2, runs_counted: 10 })),
    most_failing: many((n) => ({ ...test(n + 300), fail_count: 3, runs: 10 })),
    slowest: many((n) => ({ ...test(n + 400), mean_duration: 1200, runs: 10 })),
    slower: many((n) => ({ ...test(n + 500), baseline_ms: 1000, recent_ms: 1400, started_run_id: n, started_run_number: n })),
    flakier: many((n) => ({
      ...test(n + 700),
      flaky_rate: 0.25,
      flaky_runs: 6,
      runs_counted: 24,
      previous_flaky_rate: n % 2 ? null : 0.043,
      previous_runs_counted: n % 2 ? 0 : 23,
    })),
    // Tests' and groups' issues on each tracker; the project has 7 more open than the digest holds.
    open_issues: many((n) => {
      const tracker = (['github', 'gitlab', 'jira', 'linear'] as const)[n % 4]!;
      const key = tracker === 'jira' ? `OPS-${n}` : tracker === 'linear' ? `ENG-${n}` : String(n + 1);
      return n % 2 === 0
        ? {
            subject_kind: 'test' as const,
            subject_id: test(n + 600).test_case_id,
            title: test(n + 600).title,
            tracker,
            issue_key: key,
            issue_url: `https://issues.example/${key}?a=1&b=(2)`,
          }
        : {
            subject_kind: 'failure_group' as const,
            subject_id: `fg ${n}/x`,
            title: `group ${n} ${LONG}`,
            tracker,
            issue_key: key,
            issue_url: n === 1 ? null : `https://issues.example/${key}`,
          };
    }),
    open_issues_total: count === 0 ? 0 : count + 7,
  };
  const base = 'https://proctor.example/projects/1';
  return {
    project_name: 'Shop',
    digest,
    links: {
      page: `${base}/digest`,
      test: (id) => `${base}/tests/${id}`,
      group: (id) => `${base}/failure-groups/${encodeURIComponent(id)}`,
      run: (id) => `${base}/runs/${id}`,
    },
  };
}

describe("a digest's messages at their limits", () => {
  it('when every section is full of long hostile titles, then the Teams post stays under 28 KB and valid, Slack sections under 3000 characters, and the mail escapes them', () => {
    const full = story(40);
    const teams = teamsDigest(full);
    expect(Buffer.byteLength(JSON.stringify(teams))).toBeLessThan(28 * 1024);
    expect(cardProblems(teams.attachments[0]!.content)).toEqual([]);
    const card = teams.attachments[0]!.content.body.map((b) => b.text).join('\n');
    expect(card).toContain('more');
    expect(card).not.toContain('[x](https://evil.example)');

    const slack = slackDigest(full);
    expect(slack.blocks.length).toBeLessThanOrEqual(50);
    for (const block of slack.blocks) if (block.type === 'section') expect(block.text.text.length).toBeLessThanOrEqual(3000);
    expect(JSON.stringify(slack)).not.toContain('<b>');
    expect(slack.blocks.find((b) => b.type === 'section' && b.text.text.startsWith('*Turned flaky* (40)'))).toBeDefined();

    const mail = emailDigest(full);
    expect(mail.html).not.toContain('<b>');
    expect(mail.html).toContain('&lt;b&gt;&amp;');
    expect(mail.text).toContain('and 30 more');
    expect(mail.text).toContain('Got flakier (40):');
    expect(mail.text).toContain('· flaky in 25% of 24 runs, was 4.3% the 14 days before\n');
    expect(mail.text).toContain('· flaky in 25% of 24 runs, was not run the 14 days before\n');
  });

  it('when a section is empty, then no message shows it', () => {
    const none = story(0);
    expect(slackDigest(none).blocks.map((b) => b.type)).toEqual(['header', 'section', 'actions']);
    expect(teamsDigest(none).attachments[0]!.content.body).toHaveLength(2);
    expect(emailDigest(none).text).not.toContain('Turned');
  });
});

describe("a digest's open tracker issues", () => {
  it('when the digest holds open issues of tests and groups, then each message lists them by their tracker name and link, counts all the open ones, and stays in its limits', () => {
    const three = story(3);
    const slack = slackDigest(three);
    const section = slack.blocks.find((b) => b.type === 'section' && b.text.text.startsWith('*Open issues* (10)'));
    expect(section?.type === 'section' && section.text.text.split('\n').slice(1)).toEqual([
      expect.stringMatching(
        /^• <https:\/\/proctor\.example\/projects\/1\/tests\/0+600-a+\|600 \*\[x\]\(https:\/\/evil\.example\) &lt;b&gt;&amp;.*…> · open: <https:\/\/issues\.example\/1\?a=1&amp;b=\(2\)\|GitHub #1>$/,
      ),
      expect.stringMatching(/^• <https:\/\/proctor\.example\/projects\/1\/failure-groups\/fg%201%2Fx\|group 1 .*> · open: GitLab #2$/),
      expect.stringMatching(
        /^• <https:\/\/proctor\.example\/projects\/1\/tests\/0+602-a+\|602 .*> · open: <https:\/\/issues\.example\/OPS-2\?a=1&amp;b=\(2\)\|Jira OPS-2>$/,
      ),
      'and 7 more',
    ]);

    const card = teamsDigest(three).attachments[0]!.content;
    expect(cardProblems(card)).toEqual([]);
    const texts = card.body.map((b) => b.text);
    const at = texts.indexOf('Open issues (10)');
    expect(at).toBeGreaterThan(0);
    expect(texts[at + 1]).toMatch(
      /^\[600 .*\]\(https:\/\/proctor\.example\/projects\/1\/tests\/0+600-a+\) · open: \[GitHub \\#1\]\(https:\/\/issues\.example\/1\?a=1&b=%282%29\)$/,
    );
    expect(texts[at + 2]).toMatch(/ · open: GitLab \\#2$/);
    expect(texts[at + 4]).toBe('and 7 more');

    const mail = emailDigest(three);
    expect(mail.html).toContain('Open issues (10)</h2>');
    expect(mail.html).toContain('· open: <a href="https://issues.example/1?a=1&amp;b=(2)">GitHub #1</a>');
    expect(mail.html).toContain('<a href="https://proctor.example/projects/1/failure-groups/fg%201%2Fx">group 1 *[x](https://evil.example) &lt;b&gt;&amp;');
    expect(mail.text).toMatch(/Open issues \(10\):\n- 600 .* · open: GitHub #1 \(https:\/\/issues\.example\/1\?a=1&b=\(2\)\)\n/);
    expect(mail.text).toContain('· open: GitLab #2\n  https://proctor.example/projects/1/failure-groups/fg%201%2Fx');
    expect(mail.text).toMatch(/Open issues[\s\S]*\nand 7 more\n/);
  });

  it('when the project has no open issue, then no message has the section', () => {
    const none = { ...story(3), digest: { ...story(3).digest, open_issues: [], open_issues_total: 0 } };
    expect(JSON.stringify(slackDigest(none))).not.toContain('Open issues');
    expect(JSON.stringify(teamsDigest(none))).not.toContain('Open issues');
    expect(emailDigest(none).text).not.toContain('Open issues');
  });
});

describe('owner patterns', () => {
  it('when a rule names an owner exactly or by a glob, then it matches case-insensitively and nothing else', () => {
    expect(ownerMatches('@acme/payments', '@ACME/Payments')).toBe(true);
    expect(ownerMatches('@acme/pay*', '@acme/payments-eu')).toBe(true);
    expect(ownerMatches('@acme/pay*', '@acme/search')).toBe(false);
    expect(ownerMatches('@acme/payments', '@acme/payments-eu')).toBe(false);
    expect(ownerMatches('*@example.com', 'carol@example.com')).toBe(true);
    // A glob's other characters are literal: a dot is a dot.
    expect(ownerMatches('*@example.com', 'carol@exampleXcom')).toBe(false);
  });
});

describe('digest schedules', () => {
  it('when a weekly digest is due on Tuesdays at 07:00 in Paris, then its moments follow daylight saving', () => {
    const schedule = { period: 'week' as const, hour: 7, weekday: 2, time_zone: 'Europe/Paris' };
    // Summer time (UTC+2) ends on 25 October 2026.
    expect(nextDue(schedule, new Date('2026-10-18T00:00:00Z')).toISOString()).toBe('2026-10-20T05:00:00.000Z');
    expect(nextDue(schedule, new Date('2026-10-20T05:00:00Z')).toISOString()).toBe('2026-10-27T06:00:00.000Z');
    expect(latestDue(schedule, new Date('2026-10-27T06:00:00Z'))?.toISOString()).toBe('2026-10-27T06:00:00.000Z');
    expect(latestDue(schedule, new Date('2026-10-27T05:59:59Z'))?.toISOString()).toBe('2026-10-20T05:00:00.000Z');
  });
});
