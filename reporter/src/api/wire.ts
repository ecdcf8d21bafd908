// The reporting wire format, defined once: the reporter sends these bodies and reads these answers;
// the server's zod schemas (server/src/runs/schema.ts, server/src/testcases/schema.ts) are built
// from these limits and checked against these types when the server type-checks. Types and
// constants only, so that the reporter keeps no runtime dependency.

export const WIRE_LIMITS = {
  /** Shards of one run. */
  shards: 1000,
  runKey: 200,
  branch: 500,
  commit: 100,
  url: 2000,
  /** Tests in one begin request; the reporter sends a suite in chunks of `listChunk`. */
  testsPerBegin: 100_000,
  listChunk: 5000,
  /** Titles, paths and suites longer than this are cut by the server with a marker. */
  title: 2000,
  suitesPerTest: 50,
  runnerProject: 500,
  tagsPerTest: 100,
  tag: 200,
  /** A test's owners (`@user`, `@org/team`, an e-mail address), from CODEOWNERS and `owner` annotations. */
  ownersPerTest: 50,
  owner: 200,
  /** Attempts in one result batch. */
  resultsPerBatch: 5000,
  retries: 100,
  /** A worker slot's index (`parallel_index`): below the workers one machine runs. */
  workers: 1000,
  errorMessage: 20_000,
  errorLocation: 2000,
  outputTail: 10_000,
  failureGroupId: 200,
  /** Why a skipped test was skipped (`test.skip(condition, reason)`, `test.fixme`). */
  skipReason: 2000,
  /** The steps on the way to a failure, outermost first, and each one's title. */
  failedSteps: 10,
  stepTitle: 200,
  stepCategory: 50,
  /** A failure's first stack frames in the suite's own files, `file:line:column` each. */
  stackFrames: 5,
  stackFrame: 500,
  /** Errors of one shard's end, each at most `errorMessage`. */
  shardErrors: 50,
  /** Attachments declared in one request. */
  attachmentsPerRequest: 200,
  attachmentName: 500,
  contentType: 200,
  /** Playwright projects whose snapshot layout one begin carries, and the length of a path or template in it. */
  snapshotProjects: 500,
  snapshotPath: 2000,
} as const;

/** The CI systems the reporter knows by their variables (runs/ci.ts). */
export type CiSystemName = 'github' | 'gitlab' | 'buildkite' | 'circleci' | 'jenkins' | 'azure' | 'bitbucket';

/** `POST /api/test-runs/report`: the run of a report-only invocation, made by its first shard. */
export interface ReportRunBody {
  environment: string;
  run_key: string | null;
  total_shards: number;
  branch: string | null;
  commit: string | null;
  build_url: string | null;
  /** The pull or merge request the CI build is for; sent only when there is one (a server before 0.2.0 refuses the field). */
  pull_request?: number | null;
  /** Fail fast: stop the run once this many tests failed; sent only when set (a server before 0.3.0 refuses the field). */
  max_failures?: number | null;
}

export interface ReportRunAnswer {
  data: {
    test_run: {
      /** The run in URLs and the API. */
      id: number;
      /** The run's number in its project (#1 its first run), what pages name it by; older servers send none. */
      number?: number;
    };
  };
}

/** A test as the runner lists it. */
export interface WireListedTest {
  /** The runner's 41-character test id. */
  id: string;
  title: string;
  file_path: string;
  suites: string[];
  runner_project: string;
  tags: string[];
  line: number | null;
  column: number | null;
  /** Its owners, from `owner` annotations and the repository's CODEOWNERS; sent only when it has some (a server before 0.3.0 refuses the field). */
  owners?: string[];
}

/** What begin answers: from 0.2.0 on, which of the optional fields of a final outcome the server stores. */
export interface ShardBeginAnswer {
  data: {
    success: boolean;
    accepts_final_fields?: OptionalFinalField[];
    /** The optional fields of an attempt this server takes (`parallel_index`); older servers send none and take none. */
    accepts_attempt_fields?: OptionalAttemptField[];
    /** The run's number in its project (#1 its first run), what pages name it by; older servers send none. */
    number?: number;
  };
}

/** `POST /api/test-runs/{id}/shards/{shard}/begin`. */
export interface ShardBeginBody {
  tests: WireListedTest[];
  commit: string | null;
  /** True when the shard's list is the whole suite's share (no grep, project or file filter). */
  complete: boolean;
  started_at?: string;
  /** Where the suite's Playwright keeps its screenshot baselines; sent when known (a server before 0.4.0 refuses the field). */
  snapshots?: WireSnapshotLayout;
}

/** Where one Playwright project keeps its screenshot baselines, as its config resolved them. */
export interface WireSnapshotProject {
  name: string;
  /** The project's testDir and snapshotDir, relative to the config's folder, `/`-separated (`.` for the folder itself). */
  test_dir: string;
  snapshot_dir: string;
  /** `expect.toHaveScreenshot.pathTemplate`, else `snapshotPathTemplate`; null: Playwright's default template. */
  path_template: string | null;
}

/** What an approved screenshot's path in the repository is computed from (Playwright's template, filled in as Playwright does). */
export interface WireSnapshotLayout {
  /** `process.platform` of the machine that ran the tests: Playwright's default snapshot suffix. */
  platform: string;
  /** The config's folder relative to the repository's root, `/`-separated (`.` when it is the root, or no git checkout was found). */
  config_dir: string;
  projects: WireSnapshotProject[];
}

export type AttemptStatus = 'passed' | 'failed' | 'timedOut' | 'skipped' | 'interrupted';
export type FinalOutcome = 'expected' | 'unexpected' | 'flaky' | 'skipped';

/** One attempt of a test; the last one carries the test's final outcome. */
export interface WireAttempt {
  test_id: string;
  retry: number;
  status: AttemptStatus;
  duration: number;
  error_message: string | null;
  error_location: string | null;
  stdout_tail: string | null;
  stderr_tail: string | null;
  started_at: string | null;
  /** Playwright's worker slot that ran the attempt (`parallelIndex`, 0 to workers - 1): a lane of the run's timeline. Sent only to a server whose begin answer lists it in `accepts_attempt_fields`. */
  parallel_index?: number | null;
  final: {
    outcome: FinalOutcome;
    total_duration: number;
    error_message: string | null;
    failure_group_id: string | null;
    /** Why a skipped test was skipped; sent only to a server whose begin answer lists it in `accepts_final_fields` (an older one refuses the field). */
    skip_reason?: string | null;
    /** A failure's steps, outermost first (a hook, a fixture, an expect): what its category is decided from; sent as `skip_reason` is. */
    failed_steps?: WireStep[] | null;
    /** A failure's first stack frames in the suite's own files (`tests/cart.spec.ts:12:5`, innermost first); sent as `skip_reason` is. */
    stack_frames?: string[] | null;
  } | null;
}

/** A step of a test as Playwright names it: its category (`hook`, `fixture`, `expect`, `pw:api`, `test.step`) and title. */
export interface WireStep {
  category: string;
  title: string;
}

/** The fields of a final outcome a server may not know: sent only when its begin lists them. */
export const OPTIONAL_FINAL_FIELDS = ['skip_reason', 'failed_steps', 'stack_frames'] as const;
export type OptionalFinalField = (typeof OPTIONAL_FINAL_FIELDS)[number];

/** The fields of an attempt a server may not know: sent only when its begin lists them. */
export const OPTIONAL_ATTEMPT_FIELDS = ['parallel_index'] as const;
export type OptionalAttemptField = (typeof OPTIONAL_ATTEMPT_FIELDS)[number];

/** `POST /api/test-runs/{id}/results`. */
export interface ResultBatchBody {
  shard: number;
  results: WireAttempt[];
}

/** What a result batch answers: from 0.3.0 on, the run after it (`cancelled` by `max_failures` when the batch stopped it). */
export interface ResultBatchAnswer {
  data: {
    received: number;
    recorded: number;
    test_run?: { state: string; cancelled_by: string | null };
  };
}

/** `GET /api/test-runs/{id}/state`: what a reporter asks each second while its tests run, to hear a cancel at once. */
export interface RunStateAnswer {
  data: {
    test_run: { state: string; cancelled_by: string | null; cancel_reason: string | null };
  };
}

/** The error `code` of a request refused because its run has ended: a 409, or a 401 for a run's own key or an agent's token. */
export const RUN_ENDED = 'run_ended';

/** The typed fields of an error answer beside its message (servers from 0.3.0 on). */
export interface WireErrorFields {
  code?: typeof RUN_ENDED;
  run_state?: string | null;
}

/**
 * The run's end an error answer says by its `code` (never by its words): its state when the server
 * named it; null when the answer is another refusal, or from a server that sends no code.
 */
export function runEndedOf(text: string): { state: string | null } | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  const error = (body as { error?: unknown } | null)?.error as WireErrorFields | null | undefined;
  if (typeof error !== 'object' || error === null || error.code !== RUN_ENDED) return null;
  return { state: typeof error.run_state === 'string' ? error.run_state : null };
}

/** Playwright's end status; `crashed` is an agent's, for a Playwright that ended without its reporter ending the shard. */
export type ShardEndStatus = 'passed' | 'failed' | 'timedout' | 'interrupted' | 'crashed';

/** `POST /api/test-runs/{id}/shards/{shard}/end`. */
export interface ShardEndBody {
  status: ShardEndStatus;
  errors: string[];
}

export interface ShardEndAnswer {
  data: {
    state: string;
    summary_url: string;
    /** The run's number in its project (#1 its first run), what pages name it by; older servers send none. */
    number?: number;
  };
}

/** Which attempts' attachments the reporter uploads: those of failed and flaky tests, all, or none. */
export const ARTIFACT_MODES = ['failures', 'all', 'none'] as const;
export type ArtifactMode = (typeof ARTIFACT_MODES)[number];

/** An attachment of one attempt, named by the sha256 of its bytes. */
export interface AttachmentDeclaration {
  test_id: string;
  retry: number;
  name: string;
  content_type: string;
  /** Lowercase hex. */
  sha256: string;
  size_bytes: number;
}

/** `POST /api/test-runs/{id}/attachments`. */
export interface AttachmentsBody {
  attachments: AttachmentDeclaration[];
}

/**
 * For each declaration, in order: `upload` (PUT the bytes to `upload_url`, relative to the server's
 * base URL unless absolute, with `upload_headers`; then, where there is one, POST to `confirm_url`),
 * `stored` (the project holds these bytes already), or `refused` (with the reason, such as the
 * server's size limit).
 */
export interface AttachmentDisposition {
  sha256: string;
  status: 'upload' | 'stored' | 'refused';
  upload_url: string | null;
  /** Headers the PUT must carry: an object store checks the bytes' sha256 by one. */
  upload_headers: Record<string, string>;
  /**
   * Where an upload that went straight to an object store is confirmed (a POST with no body,
   * relative as `upload_url`): the server then checks and records the bytes. Null when the PUT
   * alone does.
   */
  confirm_url: string | null;
  reason: string | null;
}

export interface AttachmentsAnswer {
  data: { attachments: AttachmentDisposition[] };
}

/** What the reporter reads of an active snooze (`GET /api/snoozes?environment=...&status=active`). */
export interface WireSnooze {
  id: number;
  test_ids: string[];
  snooze_until: string;
  description: string | null;
  source: 'user' | 'auto';
}

export interface SnoozeListAnswer {
  data: { snoozes: WireSnooze[] };
  pagination: { page: number; total_pages: number };
}

/**
 * The message of an error answer's body, in either of the contract's shapes (`{ error: { message } }`
 * or `{ error }`); null when the body is not one (a proxy's HTML page, say). The reporter and the
 * action both read errors with it.
 */
export function errorMessageOf(text: string): string | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  const error = (body as { error?: unknown } | null)?.error;
  if (typeof error === 'string') return error;
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : null;
}

/** `POST /api/test-runs/junit` (multipart/form-data, a part per JUnit XML file): its answer. */
export interface JunitUploadAnswer {
  data: {
    test_run: {
      /** The run in URLs and the API. */
      id: number;
      /** The run's number in its project (#1 its first run), what pages name it by; older servers send none. */
      number?: number;
      state: string;
      summary_url: string;
    };
    /**
     * Each file as read. Older servers answer `name` and `testcases` alone; newer ones the
     * tests counted, the totals the file states, and why they differ (`differences`, empty when not).
     */
    files: {
      name: string;
      /** The format the server read the file as (`junit`, `trx`, `nunit`, …); older servers, JUnit alone, say none. */
      format?: string;
      testcases: number;
      tests?: number;
      failures?: number;
      errors?: number;
      skipped?: number;
      totals?: { tests: number; failures: number; errors: number; skipped: number } | null;
      differences?: string[];
    }[];
    counts: { tests: number; passed: number; failed: number; flaky: number; skipped: number; failed_snoozed: number };
    /** The first 100 failed tests of the upload. */
    failed_tests: { test_case_id: string; title: string; file_path: string; snoozed: boolean }[];
    /** Files the testcases' output names, for the client to send as the attempts' attachments; the path relative to `file`'s folder. */
    attachments: { file: string; path: string; test_case_id: string; retry: number }[];
  };
}

/** `GET /api/test-order?environment=…&branch=…`: the environment's tests in its order strategy's order (issue 56). */
export interface TestOrderAnswer {
  data: {
    environment: string;
    branch: string | null;
    strategy: 'duration' | 'failures-first';
    /** The run whose failures count as the last run's; null when the environment has none ended. */
    last_run: { id: number; number: number | null; branch: string | null } | null;
    /** The branch's last passing run with a known commit: a test whose files changed since that commit is `changed`; null: none. */
    changed_since: { run_id: number; run_number: number; commit: string } | null;
    tests: {
      id: string;
      title: string;
      file_path: string;
      runner_project: string;
      reasons: ('failed_last_run' | 'new' | 'changed' | 'failure_rate' | 'flaky')[];
      risk_rank: number | null;
      failed_last_run: boolean;
      failure_rate: number;
      flaky_score: number;
      duration_ms: number | null;
    }[];
  };
}

/** `GET /api/test-runs/{id}/baselines`: what `proctor-ci snapshots pull` reads. */
export interface BaselinesAnswer {
  data: {
    files: {
      change_id: number;
      snapshot_name: string;
      runner_project: string | null;
      /** Relative to the repository's root, `/`-separated; null when the server could not tell it (`reason` says why). */
      path: string | null;
      reason: string | null;
      /** A signed URL of the approved image, absolute. */
      image_url: string;
      committed_in: number | null;
    }[];
  };
}
