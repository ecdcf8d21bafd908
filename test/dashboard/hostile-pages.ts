import type { ListedKey } from '../../server/src/auth/index.ts';
import type { FailureGroupRow } from '../../server/src/failuregroups/index.ts';
import type { Digest } from '../../server/src/digests/index.ts';
import type { Project } from '../../server/src/projects/index.ts';
import type { TrackerSettings } from '../../server/src/trackers/index.ts';
import type { BaselineCommit, VisualChange } from '../../server/src/visual/index.ts';
import type { Viewer } from '../../server/src/dashboard/layout.ts';
import type { RunPageDetails, RunRow, RunTimeline, SummaryDetail } from '../../server/src/runs/index.ts';
import type { ComparedTest, Comparison } from '../../server/src/comparisons/index.ts';

// Every page written as components, rendered with a hostile text in every field a person, a test
// suite or a CI supplies (names, titles, files, tags, owners, branches, commits, reasons, searches):
// what jsx-hostile.test.ts parses in Chromium. The page functions are passed in, so that the same
// data renders any version of the pages.

export const HOSTILE = `"><img src=x onerror=alert(1)><script>alert(2)</script>'`;
const h = (field: string) => `${field}${HOSTILE}`;

const at = new Date('2026-11-20T10:00:00Z');
const now = new Date('2026-11-25T10:00:00Z');

export const viewer: Viewer = { userId: 'u1', name: h('name'), email: h('mail'), csrfToken: h('csrf') };

export const project: Project = {
  id: 7,
  name: h('project'),
  repo_url: 'https://git.example.test/acme/shop',
  repo_name: h('repo'),
  create_environments_on_first_use: true,
  baselines_to_default_branch: false,
  visual_noise_ratio: null,
  visual_noise_runs: 5,
  created_at: at,
};

const testId = h('test-id');
const point = (n: number, commit: string | null) => ({ test_run_id: 100 + n, test_run_number: n, commit, run_at: at });
const history = (n: number, outcome: 'passed' | 'failed' | 'flaky' | 'skipped') => ({
  test_case_id: testId,
  test_run_id: 100 + n,
  test_run_number: n,
  environment_id: 1,
  run_at: at,
  started_at: at,
  outcome,
  total_duration: 1200,
  retry: 0,
});

const metrics = {
  test_case_id: testId,
  test_name: h('title'),
  file_path: h('file'),
  project_name: h('runner'),
  tags: [h('@tag')],
  owners: [h('@owner')],
  last_run_at: at,
  total_runs: 10,
  pass_count: 7,
  fail_count: 2,
  flaky_count: 1,
  mean_duration: 1500,
};

const group: FailureGroupRow = {
  id: h('group-id'),
  title: h('group'),
  category: 'assertion',
  status: 'open',
  diagnosis: { category: h('category'), summary: h('summary'), created_at: at.toISOString() } as unknown as FailureGroupRow['diagnosis'],
  first_seen_at: at,
  last_seen_at: at,
  last_test_run_id: 101,
  member_count: 2,
  occurrence_count: 3,
  created_at: at,
  updated_at: at,
  issue: null,
  owners: [h('@owner')],
};

const snooze = (id: number, source: 'user' | 'auto', testIds: string[]) => ({
  id,
  test_ids: testIds,
  snooze_until: new Date('2026-12-01T00:00:00Z'),
  description: h('reason'),
  created_from_test_run_id: null,
  created_by: 'u1',
  created_at: at,
  updated_at: at,
  scoped_to_environment_id: source === 'auto' ? 1 : null,
  source,
});

const key = (id: string, name: string | null, runNumber: number | null): ListedKey =>
  ({
    id,
    name,
    kind: 'project',
    scope: 'report',
    test_run_id: runNumber === null ? null : 100 + runNumber,
    test_run_number: runNumber,
    created_by: { id: 'u1', name: h('maker') },
    created_at: at,
    last_used_at: runNumber === null ? now : null,
  }) as ListedKey;

/** The page functions as the dashboard exports them. */
export interface PageModules {
  testsPage: typeof import('../../server/src/dashboard/tests-page.tsx').testsPage;
  testPage: typeof import('../../server/src/dashboard/tests-page.tsx').testPage;
  flakyTestsPage: typeof import('../../server/src/dashboard/flaky-page.tsx').flakyTestsPage;
  groupsPage: typeof import('../../server/src/dashboard/groups-page.tsx').groupsPage;
  groupPage: typeof import('../../server/src/dashboard/groups-page.tsx').groupPage;
  snoozesPage: typeof import('../../server/src/dashboard/snoozes-page.tsx').snoozesPage;
  searchPage: typeof import('../../server/src/dashboard/search-page.tsx').searchPage;
  analyticsPage: typeof import('../../server/src/dashboard/analytics-page.tsx').analyticsPage;
  environmentsPage: typeof import('../../server/src/dashboard/environments-page.tsx').environmentsPage;
  membersPage: typeof import('../../server/src/dashboard/team-pages.tsx').membersPage;
  keysPage: typeof import('../../server/src/dashboard/team-pages.tsx').keysPage;
  auditPage: typeof import('../../server/src/dashboard/team-pages.tsx').auditPage;
  runPage: typeof import('../../server/src/dashboard/run-page.tsx').runPage;
  comparePage: typeof import('../../server/src/dashboard/compare-page.tsx').comparePage;
  visualPage: typeof import('../../server/src/dashboard/visual-changes-page.tsx').visualPage;
  settingsPage: typeof import('../../server/src/dashboard/settings-page.tsx').settingsPage;
  digestPage: typeof import('../../server/src/dashboard/digest-page.tsx').digestPage;
  /** The run page's timeline section (the run page places it), rendered alone. */
  runTimelineSection: (project: Project, timeline: RunTimeline) => string;
  signInPage: typeof import('../../server/src/dashboard/pages.tsx').signInPage;
  projectsPage: typeof import('../../server/src/dashboard/pages.tsx').projectsPage;
  runsPage: typeof import('../../server/src/dashboard/pages.tsx').runsPage;
}

const run: RunRow = {
  id: 105,
  number: 5,
  project_id: 7,
  environment_id: 1,
  environment_slug: h('slug'),
  environment_name: h('env'),
  state: 'failed',
  origin: 'api',
  total_shards: 2,
  test_run_branch: h('ran-branch'),
  build_url: h('javascript:build'),
  pull_request: 12,
  build_branch: h('branch'),
  ci_build_url: `https://ci.example.test/job?x=${HOSTILE}`,
  commit: h('commit'),
  test_run_head_sha: h('sha'),
  total_count: 5,
  success_count: 1,
  failed_count: 2,
  skipped_count: 1,
  flaky_count: 1,
  snoozed_count: 0,
  duration: 65_000,
  error_reason: h('error-reason'),
  cancel_reason: null,
  cancelled_by: null,
  max_failures: null,
  order_strategy: 'failures-first',
  selection: { mode: 'all', base_commit: h('base'), base_run_id: 104, reason: h('selection-reason'), left_out: 0 },
  rerun_source_id: null,
  pinned: true,
  details_deleted_at: null,
  created_at: at,
  run_started_at: at,
  run_ended_at: now,
};

const attachment = (retry: number, name: string, contentType: string) => ({
  retry,
  name,
  content_type: contentType,
  size_bytes: 10,
  url: `https://proctor.example.test/attachments/${retry}?name=${encodeURIComponent(name)}&raw=${HOSTILE}`,
});

const detail = (status: SummaryDetail['status'], id: string, more: Partial<SummaryDetail> = {}): SummaryDetail => ({
  test_case_id: id,
  title: h(`title-${status}`),
  file_path: h('file'),
  runner_project: h('runner'),
  status,
  snoozed: false,
  duration: 1500,
  retries: status === 'flaky' ? 1 : 0,
  error_message: status === 'failed' || status === 'flaky' ? h('error\n  at line') : null,
  failure_group_id: status === 'failed' ? h('group-id') : null,
  failure_group_title: status === 'failed' ? h('group') : null,
  skip_reason: status === 'skipped' ? h('skip-reason') : null,
  owners: [h('@owner'), '@team'],
  failure_category: status === 'failed' || status === 'flaky' ? 'assertion' : null,
  attachments: [],
  ...more,
});

const runDetails: RunPageDetails = {
  tests: [
    detail('failed', testId, {
      attachments: [
        attachment(0, h('screenshot'), 'image/png'),
        attachment(0, h('video'), 'video/webm'),
        attachment(0, 'trace', 'application/zip'),
        attachment(1, h('log'), 'text/plain'),
      ],
    }),
    detail('failed', h('second'), { failure_group_id: null, failure_group_title: null, failure_category: 'timeout', owners: [] }),
    detail('flaky', h('flaky-id')),
    detail('passed', h('passed-id')),
    detail('skipped', h('skipped-id')),
  ],
  hidden: 3,
  breakdown: [
    { runner_project: h('runner'), status: 'failed', count: 2 },
    { runner_project: h('runner'), status: 'passed', count: 1 },
    { runner_project: 'webkit', status: 'skipped', count: 1 },
  ],
  previous: { id: 104, number: 4, failed: new Set([testId]) },
};

const timelineAttempt = (shard: number, retry: number, offset: number) => ({
  test_case_id: testId,
  title: h('timeline-title'),
  shard,
  agent_id: null,
  agent: null,
  parallel_index: 0,
  retry,
  status: retry > 0 ? 'passed' : 'failed',
  started_at: new Date(at.getTime() + offset),
  duration: 2000,
});

const timeline: RunTimeline = {
  origin: at,
  span: 8000,
  total: 3,
  lanes: [
    {
      place: 'shard 1',
      kind: 'shard',
      order: 1,
      worker: 0,
      packed: false,
      attempts: [timelineAttempt(1, 0, 0), timelineAttempt(1, 1, 2500)],
      start: 0,
      end: 4500,
      busy: 4000,
    },
    { place: 'shard 2', kind: 'shard', order: 2, worker: 0, packed: false, attempts: [timelineAttempt(2, 0, 6000)], start: 6000, end: 8000, busy: 2000 },
  ],
};

const compared = (status: ComparedTest['status'], base: ComparedTest['base_status'], more: Partial<ComparedTest> = {}): ComparedTest => ({
  test_case_id: testId,
  title: h('title'),
  file_path: h('file'),
  runner_project: h('runner'),
  status,
  base_status: base,
  duration: 2000,
  base_duration: 1000,
  error_message: status === 'failed' ? h('\n  error') : null,
  failure_group_id: null,
  failure_group_title: null,
  ...more,
});

const comparison: Comparison = {
  run: { id: 105, number: 5, state: 'failed', environment_slug: h('slug'), branch: h('branch'), commit: h('commit'), created_at: at.toISOString() },
  base: { id: 104, number: 4, state: 'passed', environment_slug: h('slug'), branch: null, commit: null, created_at: at.toISOString() },
  new_failures: {
    total: 3,
    tests: [compared('failed', 'passed'), compared('failed', null, { failure_group_id: h('group-id'), failure_group_title: h('group') })],
  },
  fixed: { total: 1, tests: [compared('passed', 'failed')] },
  still_failing: { total: 0, tests: [] },
  added: { total: 1, tests: [compared('passed', null, { runner_project: '' })] },
  removed: { total: 1, tests: [compared(null, 'skipped')] },
  flaky: { total: 1, tests: [compared('flaky', 'passed')] },
  duration_changes: { total: 2, tests: [compared('passed', 'passed'), compared('passed', 'flaky', { test_case_id: h('faster'), duration: 500 })] },
};

/** Each page, by a name, rendered with hostile values (several states of a page where its parts differ). */
export function hostilePages(m: PageModules): Record<string, string> {
  const flakyRow = {
    test_case_id: testId,
    environment_id: 1,
    title: h('title'),
    file_path: h('file'),
    runner_project: h('runner'),
    owners: [h('@owner')],
    runs_counted: 12,
    flaky_runs: 3,
    failed_runs: 1,
    score: 0.25,
    class: 'flaky' as const,
    last_flaky_run_id: 103,
    last_flaky_run_number: 3,
    quarantined: false,
  };
  const flakyView = {
    filter: { environmentId: 1, class: 'flaky-broken' as const, search: h('search'), owner: h('@owner'), days: 14 },
    environments: [{ id: 1, name: h('env') }],
    rows: [flakyRow, { ...flakyRow, test_case_id: h('other'), class: 'unknown' as const, runs_counted: 4, environment_id: 1 }],
    total: 3,
    days: ['2026-11-24', '2026-11-25'],
    trends: new Map([[`1:${testId}`, [{ environment_id: 1, test_case_id: testId, day: '2026-11-25', counted_runs: 2, flaky_runs: 1 }]]]),
    dayRuns: new Map([['1:2026-11-25', { environment_id: 1, day: '2026-11-25', id: 104, number: 4 }]]),
    quarantines: new Map([[`1:${testId}`, snooze(9, 'auto', [testId, h('another')])]]),
    authors: new Map([['u1', h('author')]]),
    events: [{ test_case_id: testId, environment_id: 1, action: 'quarantined' as const, reason: h('why'), snooze_id: 9, created_at: at }],
    titles: new Map([[testId, h('title')]]),
    policy: { mode: 'suggest' as const, threshold: 0.2, cap_percent: 5, expiry_days: 14, release_after_clean_runs: 10 },
    counted: { tests: 3, mostRuns: 12 },
    now,
  } as unknown as Parameters<PageModules['flakyTestsPage']>[2];
  const found = {
    tests: [{ test_case_id: testId, title: h('title'), file_path: h('file'), runner_project: h('runner'), is_active: false }],
    runs: [
      {
        id: 101,
        number: 1,
        state: h('state'),
        environment_name: h('env'),
        branch: h('branch'),
        commit: h('commit'),
        created_at: at.toISOString(),
        matched: 'branch' as const,
      },
    ],
    failure_groups: [{ id: h('group-id'), title: h('group'), category: h('category'), status: h('status') }],
  };
  const environment = {
    id: 1,
    slug: h('slug'),
    name: h('env'),
    runner_projects_match: [h('match')],
    runner_projects_ignore: [h('ignore')],
    scheduled_trigger: h('cron'),
    burn_in_repeats: 2,
    playwright_args: [h('--arg')],
    max_failures: 10,
    order_strategy: 'duration',
    full_run_every: null,
    is_disabled: true,
  };
  return {
    tests: m.testsPage(viewer, project, {
      rows: [metrics],
      history: new Map([[testId, [history(2, 'failed'), history(1, 'passed')]]]),
      filter: { search: h('search'), tag: h('tag'), owner: h('owner'), order_by: 'flaky_rate', days: 30 },
    }),
    test: m.testPage(viewer, project, {
      id: testId,
      title: h('title'),
      file: h('file'),
      runnerProject: h('runner'),
      owners: [h('@owner')],
      history: [history(3, 'failed'), history(2, 'passed')],
      broke: [
        {
          environment_id: 1,
          environment_name: h('env'),
          branch: h('branch'),
          latest: { ...point(3, h('commit')), outcome: 'failed' },
          last_pass: point(2, 'aaaaaaaaaaaaaaaa'),
          first_failure: point(3, 'bbbbbbbbbbbbbbbb'),
          failed_runs: 1,
        },
        {
          environment_id: 2,
          environment_name: h('env2'),
          branch: null,
          latest: { ...point(3, h('commit')), outcome: 'passed' },
          last_pass: point(3, null),
          first_failure: null,
          failed_runs: 0,
        },
      ],
      groupsSeen: [{ failure_group_id: h('group-id'), title: h('group'), first: point(2, null), last: point(3, null), runs: 2 }],
      groups: [{ ...group, id: h('older-group') }],
      slower: [
        {
          test_case_id: testId,
          title: h('title'),
          file_path: h('file'),
          runner_project: h('runner'),
          environment_id: 1,
          environment_name: h('env'),
          started_run_id: 103,
          started_run_number: 3,
          baseline_ms: 100,
          recent_ms: 200,
          z: 4,
          runs_counted: 10,
          detected_at: at,
        },
      ] as unknown as Parameters<PageModules['testPage']>[2]['slower'],
      snoozes: [{ id: 1, snooze_until: new Date('2026-12-01T00:00:00Z'), description: h('reason'), source: 'auto' }],
      issue: null,
      hasTracker: false,
      now,
    }),
    flaky: m.flakyTestsPage(viewer, project, flakyView),
    'flaky, none listed, searched by owner': m.flakyTestsPage(viewer, project, { ...flakyView, rows: [], total: 0, counted: { tests: 3, mostRuns: 2 } }),
    'flaky, none listed, searched': m.flakyTestsPage(viewer, project, {
      ...flakyView,
      rows: [],
      total: 0,
      filter: { ...flakyView.filter, owner: '', class: 'flaky' },
    }),
    groups: m.groupsPage(viewer, project, [group], 'open', h('@owner')),
    group: m.groupPage(
      viewer,
      project,
      group,
      [
        { test_case_id: testId, state: 'active', source: 'human', sighting_count: 2, last_seen_at: at.toISOString(), last_test_run_id: 101 },
        { test_case_id: h('gone'), state: 'detached', source: 'machine', sighting_count: 1, last_seen_at: at.toISOString(), last_test_run_id: null },
      ],
      new Map([[testId, h('title')]]),
      new Map([[101, 1]]),
      [{ test_run_id: 101, number: 1, at, tests: 2 }],
    ),
    snoozes: m.snoozesPage(viewer, project, {
      status: 'active',
      snoozes: [snooze(1, 'user', [testId]), { ...snooze(2, 'auto', [h('unknown-test')]), created_by: null }],
      environments: new Map([[1, h('env')]]),
      titles: new Map([[testId, h('title')]]),
      authors: new Map([['u1', h('author')]]),
      found: { words: h('words'), tests: [{ id: testId, name: h('title'), file_path: h('file'), runner_project: h('runner'), tags: [h('@tag')] }], total: 4 },
      now,
    }),
    search: m.searchPage(viewer, project, h('q'), found, 1),
    'search, nothing found': m.searchPage(viewer, project, h('q'), { tests: [], runs: [], failure_groups: [] }, 5),
    analytics: m.analyticsPage(viewer, project, {
      days: ['2026-11-24', '2026-11-25'],
      windowDays: 14,
      environmentId: 1,
      environments: [{ id: 1, name: h('env') }],
      runs: [
        {
          day: '2026-11-25',
          run_count: 2,
          passed_runs: 1,
          failed_runs: 1,
          error_runs: 0,
          cancelled_runs: 0,
          rerun_count: 0,
          total_tests: 10,
          passed_tests: 8,
          failed_tests: 2,
          failed_tests_after_snooze: 0,
          flaky_tests: 1,
        },
      ],
      testCounts: [{ day: '2026-11-25', test_count: 10 }],
      flakiest: [metrics],
      failing: [],
      dayRuns: new Map([['2026-11-25', { environment_id: 1, day: '2026-11-25', id: 104, number: 4 }]]),
    }),
    environments: m.environmentsPage(
      viewer,
      project,
      [environment, { ...environment, id: 2, scheduled_trigger: null, is_disabled: false }],
      'https://proctor.example.test',
    ),
    members: m.membersPage(viewer, project, {
      members: [{ user_id: 'u1', email: h('mail'), name: h('name'), role: 'admin', joined_at: at.toISOString() }],
      invitations: [{ id: 1, email: h('invited'), role: 'member', created_by: h('inviter'), expires_at: now.toISOString() }],
      mail: false,
    }),
    keys: m.keysPage(viewer, project, [key('k1', h('key'), null), key('k2', null, 3)]),
    run: m.runPage(viewer, project, run, runDetails, now, null, null, { total: 3, pending: 1, approved: 1, rejected: 0, flaky: 1, noise: 0 }, timeline),
    'run, by kind and owner': m.runPage(
      viewer,
      project,
      { ...run, pinned: false, build_url: `https://ci.example.test/build?${HOSTILE}` },
      runDetails,
      now,
      'assertion',
      h('@owner'),
    ),
    'run, under way': m.runPage(
      viewer,
      project,
      {
        ...run,
        state: 'running',
        error_reason: null,
        cancel_reason: h('cancel'),
        order_strategy: 'duration',
        selection: null,
        origin: 'reporter',
        pull_request: null,
      },
      { ...runDetails, previous: null, hidden: 0 },
      now,
      null,
      null,
      null,
      null,
      h('position'),
    ),
    'run, results deleted': m.runPage(
      viewer,
      project,
      { ...run, details_deleted_at: now, pinned: false, selection: { ...run.selection!, mode: 'affected', reason: null, left_out: 4 } },
      { tests: [], hidden: 0, breakdown: [], previous: null },
      now,
    ),
    compare: m.comparePage(
      viewer,
      project,
      comparison,
      new Map([[testId, { test_case_id: testId, started_run_id: 103, started_run_number: 3, baseline_ms: 1000, recent_ms: 2000 }]]),
    ),
    'compare, commits linked': m.comparePage(
      viewer,
      { ...project, repo_url: 'https://github.com/acme/shop' },
      {
        ...comparison,
        run: { ...comparison.run, commit: 'aaaaaaaaaaaaaaaa' },
        base: { ...comparison.base, commit: 'bbbbbbbbbbbbbbbb' },
        duration_changes: { total: 5, tests: [compared('passed', 'passed', { base_duration: null })] },
      },
      new Map([[testId, { test_case_id: testId, started_run_id: null, started_run_number: 3, baseline_ms: 0, recent_ms: 2000 }]]),
    ),
    audit: m.auditPage(viewer, project, {
      events: [
        {
          at: at.toISOString(),
          actor: { kind: 'user', name: h('actor') },
          action: h('action'),
          target: h('target'),
          before: { name: h('before'), nested: { deep: h('deep') } },
          after: { name: h('after'), nested: { deep: h('deep') } },
        },
        { at: at.toISOString(), actor: { kind: 'cli', name: h('cli') }, action: 'key.revoked', target: 'k1', before: { scope: h('scope') }, after: null },
      ],
      action: h('filter'),
      page: 1,
      pages: 2,
    }),
    ...visualPages(m),
    ...settingsPages(m),
    ...digestPages(m),
    timeline: m.runTimelineSection(project, hostileTimeline),
    ...entryPages(m),
  };
}

/** The sign-in page (each of its states), the projects page and the runs list. */
function entryPages(m: PageModules): Record<string, string> {
  const runsView = {
    project,
    environments: [{ slug: h('slug'), name: h('env') }],
    liveUrl: `/api/test-runs?branch=${HOSTILE}`,
  };
  return {
    signIn: m.signInPage(h('/next'), h('problem'), { name: h('provider') }, { mail: true, notice: h('notice'), email: h('email') }),
    signInNoMail: m.signInPage(h('/next'), h('problem'), null, { mail: false, notice: h('notice') }),
    projects: m.projectsPage(viewer, [project, { ...project, id: 8 }], true),
    projectsNone: m.projectsPage(viewer, [], true),
    runs: m.runsPage(viewer, {
      ...runsView,
      runs: [run, { ...run, id: 106, number: 6, state: 'running', test_run_head_sha: null }],
      filter: { environment: h('slug'), branch: h('branch'), state: h('state') },
    }),
    runsNone: m.runsPage(viewer, { ...runsView, runs: [], filter: { branch: h('branch') } }),
  };
}

const visualRun = { id: 104, number: 4 } as RunRow;

const change = (id: number, verdict: VisualChange['verdict'], review: VisualChange['review']): VisualChange => ({
  id,
  test_run_id: 104,
  test_id: testId,
  title: h('title'),
  file_path: h('file'),
  runner_project: h('runner'),
  retry: 1,
  snapshot_name: h('snapshot'),
  expected_url: `/media/${h('expected')}`,
  actual_url: `/media/${h('actual')}`,
  diff_url: id === 1 ? `/media/${h('diff')}` : null,
  comparison: {
    status: id === 3 ? 'failed' : 'done',
    width: 100,
    height: 50,
    size_changed: false,
    changed_pixels: 12,
    changed_ratio: 0.0024,
    boxes: [{ x: 1, y: 2, width: 3, height: 4 }],
    threshold: 0.2,
    error: h('compare-error'),
  },
  max_diff_pixels: null,
  max_diff_pixel_ratio: null,
  verdict,
  verdict_reason: verdict === 'change' ? null : h('verdict'),
  review,
  reviewed_by: review === 'pending' ? null : h('reviewer'),
  reviewed_at: review === 'pending' ? null : at.toISOString(),
});

const commit = (id: number, state: BaselineCommit['state'], url: boolean): BaselineCommit => ({
  id,
  state,
  branch: h('branch'),
  via: 'git',
  commit_sha: h('sha'),
  commit_url: url ? `https://git.example.test/${h('commit')}` : null,
  files: [{ change_id: 1, path: h('path') }],
  error: h('commit-error'),
  attempts: 1,
  queued_at: at.toISOString(),
  finished_at: null,
  rerun: url ? { run_id: 105, run_number: 5 } : null,
  proof: url ? { run_id: 106, run_number: 6, state: 'passed', summary: h('proof') } : null,
});

function visualPages(m: PageModules): Record<string, string> {
  const changes = [change(1, 'change', 'pending'), change(2, 'flaky', 'pending'), change(3, 'change', 'approved')];
  const counts = { total: 3, pending: 1, approved: 1, rejected: 0, flaky: 1, noise: 0 };
  return {
    visual: m.visualPage(viewer, project, visualRun, { visual_changes: changes, counts }, [
      commit(1, 'committed', true),
      commit(2, 'committed', false),
      commit(3, 'queued', false),
      commit(4, 'failed', false),
    ]),
    visualEmpty: m.visualPage(viewer, project, visualRun, {
      visual_changes: [],
      counts: { total: 0, pending: 0, approved: 0, rejected: 0, flaky: 0, noise: 0 },
    }),
  };
}

const destination = (id: number, type: 'slack' | 'webhook' | 'github' | 'gitlab' | 'email' | 'teams', hasSecret: boolean) => ({
  id,
  type,
  url: `https://hooks.example.test/${h('url')}`,
  repo: h('repo'),
  project: h('gitlab-project'),
  recipients: [h('recipient')],
  environments: [h('env-slug')],
  when: 'failed' as const,
  has_secret: hasSecret,
});

const tracker = (kind: TrackerSettings['tracker']): TrackerSettings => ({
  tracker: kind,
  destination_id: kind === 'github' ? 3 : null,
  jira:
    kind === 'jira'
      ? { url: `https://jira.example.test/${h('jira')}`, project_key: h('key'), issue_type: h('type'), email: h('jira-mail'), has_token: true }
      : null,
  linear: kind === 'linear' ? { team_id: h('team'), has_api_key: false } : null,
  default_branch: h('branch'),
  create_for_new_groups: true,
  create_for_flaky_tests: false,
  create_for_broken_tests: true,
  broken_after_failures: 3,
  when_closed_failing: 'comment',
  passes_to_resolve: 5,
  close_when_resolved: true,
  updated_at: at.toISOString(),
});

function settingsPages(m: PageModules): Record<string, string> {
  const view = (trackerSettings: TrackerSettings | null, mail: boolean, instanceAdmin: boolean) => ({
    destinations: [destination(1, 'slack', false), destination(2, 'email', false), destination(3, 'github', true), destination(4, 'webhook', true)],
    bindings: [{ id: 1, host: 'github' as const, name: h('bound'), created_by: h('binder'), created_at: at.toISOString() }],
    instanceAdmin,
    policy: { results_days: 30, artifacts_days: 7 },
    quarantine: { mode: 'suggest' as const, threshold: 0.3, cap_percent: 5, expiry_days: 14, release_after_clean_runs: 10 },
    mail,
    digests: {
      subscriptions: [
        {
          id: 1,
          environment_id: 1,
          destination_id: 2,
          period: 'week' as const,
          hour: 8,
          weekday: 1,
          time_zone: h('zone'),
          next_due_at: now.toISOString(),
          last_delivery: { due_at: at.toISOString(), state: 'failed' as const, attempts: 2, last_error: h('delivery') },
          created_at: at.toISOString(),
        },
      ],
      routes: [{ id: 1, owner: h('@owner'), destination_id: 1, created_at: at.toISOString() }],
      environments: [{ id: 1, name: h('env') }],
    },
    tracker: trackerSettings,
  });
  return {
    settingsJira: m.settingsPage(viewer, project, view(tracker('jira'), true, true)),
    settingsGitHub: m.settingsPage(viewer, { ...project, repo_url: h('repo-url') }, view(tracker('github'), false, false)),
    settingsLinear: m.settingsPage(viewer, project, view(tracker('linear'), true, false)),
    settingsNone: m.settingsPage(viewer, project, view(null, false, true)),
  };
}

function digestPages(m: PageModules): Record<string, string> {
  const line = { test_case_id: testId, title: h('title'), file_path: h('file') };
  const digest: Digest = {
    environment_id: 1,
    environment_name: h('env'),
    period: 'week',
    from: h('from'),
    to: h('to'),
    runs: { runs: 10, passed_runs: 8, pass_rate: 0.8, previous: { runs: 9, passed_runs: 9, pass_rate: 1 } },
    turned_flaky: [{ ...line, run_id: 101, run_number: 1 }],
    turned_broken: [{ ...line, run_id: 102, run_number: 2 }],
    flakiest: [{ ...line, score: 0.4, flaky_runs: 2, runs_counted: 5 }],
    most_failing: [{ ...line, fail_count: 3, runs: 5 }],
    slowest: [{ ...line, mean_duration: 2000, runs: 5 }],
    slower: [{ ...line, baseline_ms: 1000, recent_ms: 2000, started_run_id: null, started_run_number: 3 }],
    flakier: [{ ...line, flaky_rate: 0.4, flaky_runs: 2, runs_counted: 5, previous_flaky_rate: null, previous_runs_counted: 0 }],
    open_issues: [
      {
        subject_kind: 'test',
        subject_id: testId,
        title: h('title'),
        tracker: 'github',
        issue_key: h('12'),
        issue_url: `https://git.example.test/${h('issue')}`,
      },
      { subject_kind: 'failure_group', subject_id: h('group-id'), title: h('group'), tracker: 'jira', issue_key: h('OPS'), issue_url: null },
    ],
    open_issues_total: 5,
  };
  return {
    digest: m.digestPage(viewer, project, { environments: [{ id: 1, name: h('env') }], digest }),
    digestEmpty: m.digestPage(viewer, project, { environments: [], digest: null }),
  };
}

const attempt = (shard: number, offsetMs: number, status: string) => ({
  test_case_id: testId,
  title: h('title'),
  shard,
  agent_id: null,
  agent: null,
  parallel_index: 0,
  retry: offsetMs > 0 ? 1 : 0,
  status: h(status),
  started_at: new Date(at.getTime() + offsetMs),
  duration: 1000,
});

const hostileTimeline: RunTimeline = {
  origin: at,
  span: 4000,
  total: 10,
  lanes: [
    {
      place: h('shard 1'),
      kind: 'shard',
      order: 1,
      worker: 0,
      packed: false,
      attempts: [attempt(1, 0, 'passed'), attempt(1, 1000, 'failed')],
      start: 0,
      end: 2000,
      busy: 2000,
    },
    { place: h('shard 2'), kind: 'shard', order: 2, worker: 0, packed: true, attempts: [attempt(2, 3000, 'passed')], start: 3000, end: 4000, busy: 1000 },
  ],
};
