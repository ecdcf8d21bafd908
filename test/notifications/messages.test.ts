import { describe, expect, it } from 'vitest';
import type { LabelledFailure, RunStory } from '../../server/src/notifications/compose.ts';
import { slackMessage } from '../../server/src/notifications/messages.ts';
import { section } from '../../server/src/notifications/request-comment.ts';

// What a failure says in a message: its label, where it is, its kind and its failure group's title.
const failure = (fields: Partial<LabelledFailure>): LabelledFailure => ({
  test_case_id: 'a'.repeat(20) + '-' + 'b'.repeat(20),
  title: 'pays by card',
  file_path: 'checkout.spec.ts',
  runner_project: 'chromium',
  label: 'new',
  error_message: null,
  failure_group_id: 'fg_1',
  failure_group_title: "locator.click on getByRole('button', { name: 'Pay' }) timed out at checkout.spec.ts:12",
  failure_category: 'locator',
  owners: [],
  ...fields,
});

const story = (failures: LabelledFailure[]): RunStory => ({
  run: {
    id: 7,
    number: 3,
    project_id: 1,
    project_name: 'Shop',
    state: 'failed',
    environment_slug: 'staging',
    environment_name: 'Staging',
    branch: 'main',
    commit: 'c'.repeat(40),
    build_url: null,
    ci_job_url: null,
    scm_actor: null,
    total_count: 2,
    success_count: 0,
    failed_count: 2,
    flaky_count: 0,
    skipped_count: 0,
    snoozed_count: 0,
    duration: 1000,
    run_ended_at: null,
    summary_url: 'https://proctor.example.com/runs/7?token=t',
  },
  failures,
  mention: null,
});

describe('a failure in a message', () => {
  it('when a failure has a kind, then Slack and the request comment say it beside its group; an unknown kind is left out', () => {
    const told = story([
      failure({}),
      failure({ title: 'ships the order', failure_category: 'unknown', failure_group_title: 'Order 4711 was not found at a.spec.ts:3' }),
    ]);
    const text = slackMessage(told).text;
    expect(text).toContain(
      "• *new* pays by card _(checkout.spec.ts · chromium)_ [locator]: locator.click on getByRole('button', { name: 'Pay' }) timed out at checkout.spec.ts:12",
    );
    expect(text).toContain('• *new* ships the order _(checkout.spec.ts · chromium)_: Order 4711 was not found at a.spec.ts:3');
    const comment = section(told, 'main', null, { request: 'pull request', base: 'the default branch' });
    expect(comment).toContain('- **new** pays by card (checkout.spec.ts · chromium) \\[locator\\]: locator.click on getByRole');
  });
});

describe('owners in the request comment', () => {
  const host = { request: 'pull request', base: 'the default branch' } as const;
  const told = story([
    failure({ test_case_id: 'x'.repeat(41), owners: ['@acme/payments', 'carol@example.com'] }),
    failure({ test_case_id: 'y'.repeat(41), title: 'ships the order', owners: ['@acme/shipping', '@acme/payments'] }),
    failure({ test_case_id: 'z'.repeat(41), title: 'retries the card', label: 'flaky', owners: ['@acme/flaky-owners'] }),
  ]);

  it('when failures have owners, then the comment mentions each owner of a failure once, flaky tests aside, and names an e-mail as text', () => {
    const comment = section(told, 'main', null, host);
    expect(comment.split('\n').at(-1)).toBe('Owners of these failures: @acme/payments `carol@example.com` @acme/shipping');
  });

  it('when some failures also fail on the base branch, then only the owners of those the branch brought are mentioned', () => {
    const comment = section(told, 'main', { runNumber: 4, failed: new Set(['x'.repeat(41)]) }, host);
    expect(comment.split('\n').at(-1)).toBe('Owners of these failures: @acme/shipping @acme/payments');
  });

  it('when no failure has owners, then no owners line is written', () => {
    expect(section(story([failure({})]), 'main', null, host)).not.toContain('Owners');
  });
});
