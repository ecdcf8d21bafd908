import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { ciBuildUrl, ciPullRequest, ciRevision, ciRunKey } from '../runs/ci.ts';
import { ConnectBudget, postStream, type TransportOptions } from '../api/transport.ts';
import type { JunitUploadAnswer } from '../api/wire.ts';
import { multipartFiles } from './multipart.ts';
import { realFolder, sendNamedAttachments } from './upload-attachments.ts';
import { EXIT, exitCodeOf, type ExitCode, openCommand, UsageError } from './exit.ts';
import { runName } from '../runs/name.ts';

/** The formats the server reads, as `--format` names them (the server's RESULT_FORMATS). */
export const UPLOAD_FORMATS = ['junit', 'trx', 'nunit', 'xunit', 'go-test-json', 'mocha-json', 'rspec-json', 'dart-json', 'ctrf'] as const;

export const UPLOAD_USAGE = `usage: proctor-ci upload FILE... --environment SLUG [--format F] [--run-key K] [--shard I/N] [--attachments-root DIR]... [--forgive-snoozed] [--json]
  Uploads the test reports any runner writes as one shard of a run of the environment: JUnit XML
  (Vitest, Jest with jest-junit, pytest, Maven, Gradle, Go, Node's test runner, Playwright's junit
  reporter...), TRX (dotnet test, vstest), NUnit, xUnit.net, \`go test -json\`, Mocha's, RSpec's and
  Dart/Flutter JSON, CTRF. The server detects each file's format from its content; --format F
  forces one (${UPLOAD_FORMATS.join(', ')}). \`upload junit FILE...\`, the older form, still works.
  History, flaky scores, quarantine, failure groups and notifications follow.
  Uploads of one CI build (its shards, each with --shard I/N) join one run; --run-key names it
  outside CI. Exit code: 0 no failure (or, with --forgive-snoozed, every failure snoozed), 1 failed
  tests, 2 refused (a broken file, a wrong key), 3 Proctor could not be reached.
  From the environment: PROCTOR_URL, PROCTOR_API_KEY, PROCTOR_PROJECT_ID (a personal key),
  PROCTOR_CONNECT_BUDGET_S (default 30). Files the report names as its tests' attachments (JUnit
  output's [[ATTACHMENT|path]], which Playwright's junit reporter writes for its screenshots, traces
  and videos; TRX's result files; NUnit's attachments) are sent, up to PROCTOR_ARTIFACT_LIMIT_MB each
  (default 100), when they lie under the folder of the report that names them or under an
  --attachments-root DIR (symbolic links resolved); any other file is skipped with a warning naming it.`;

interface UploadSettings {
  transport: TransportOptions;
  artifactLimitBytes: number;
  files: string[];
  /** The folders, besides each XML file's own, that named files may come from: real paths. */
  attachmentRoots: string[];
  query: URLSearchParams;
  forgiveSnoozed: boolean;
  json: boolean;
}

function shardOf(raw: string | undefined): { shard: number; total: number } {
  if (raw === undefined) return { shard: 1, total: 1 };
  const match = /^([1-9]\d{0,3})\/([1-9]\d{0,3})$/.exec(raw);
  if (!match || Number(match[1]) > Number(match[2])) throw new UsageError(`--shard must be I/N with 1 <= I <= N, not "${raw}"`);
  return { shard: Number(match[1]), total: Number(match[2]) };
}

function filesOf(paths: string[]): string[] {
  if (paths.length === 0) throw new UsageError('name at least one report file');
  for (const file of paths) {
    if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile()) throw new UsageError(`${file} is not a file`);
  }
  return paths;
}

function rootsOf(folders: string[]): string[] {
  return folders.map((folder) => {
    const real = realFolder(folder);
    if (!real) throw new UsageError(`--attachments-root ${folder} is not a folder`);
    return real;
  });
}

function parseUploadSettings(args: string[], env: NodeJS.ProcessEnv): UploadSettings {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        environment: { type: 'string' },
        format: { type: 'string' },
        'run-key': { type: 'string' },
        shard: { type: 'string' },
        'attachments-root': { type: 'string', multiple: true },
        'forgive-snoozed': { type: 'boolean' },
        json: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  // `upload junit FILE...`, the older form: a first word `junit` that is no file names the format.
  const older = positionals[0] === 'junit' && !fs.statSync('junit', { throwIfNoEntry: false })?.isFile();
  const format = values.format ?? (older ? 'junit' : undefined);
  if (format !== undefined && !(UPLOAD_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--format must be one of ${UPLOAD_FORMATS.join(', ')}, not "${format}"`);
  }
  if (!values.environment) throw new UsageError("--environment is required (the environment's slug)");
  const url = env.PROCTOR_URL?.trim().replace(/\/+$/, '');
  const apiKey = env.PROCTOR_API_KEY?.trim();
  if (!url || !apiKey) throw new UsageError('PROCTOR_URL and PROCTOR_API_KEY name the Proctor server and its key (a CI secret)');
  const artifactLimitMb = Number(env.PROCTOR_ARTIFACT_LIMIT_MB || 100);
  if (!(artifactLimitMb > 0)) throw new UsageError('PROCTOR_ARTIFACT_LIMIT_MB must be a positive number of MB');
  const budgetS = Number(env.PROCTOR_CONNECT_BUDGET_S ?? 30);
  if (!(budgetS > 0)) throw new UsageError('PROCTOR_CONNECT_BUDGET_S must be a positive number of seconds');
  const { shard, total } = shardOf(values.shard);
  const build = ciRunKey(env);
  // The build's uploads share a run of their own, apart from a Playwright reporter's in the same build.
  const runKey = values['run-key'] ?? (build ? `junit-${build}` : `junit-${randomUUID()}`);
  const { branch, commit } = ciRevision(env);
  const pullRequest = ciPullRequest(env);
  const query = new URLSearchParams({ environment: values.environment, run_key: runKey, shard: String(shard), total_shards: String(total) });
  if (format) query.set('format', format);
  for (const [name, value] of Object.entries({ branch, commit, build_url: ciBuildUrl(env), pull_request: pullRequest === null ? null : String(pullRequest) })) {
    if (value) query.set(name, value);
  }
  // The tests have run: from the first failed connection, the budget counts.
  const budget = new ConnectBudget(budgetS * 1000);
  budget.testsEnded();
  return {
    // A few attempts over about half a minute: the upload is idempotent (the same key and shard answer what was stored).
    transport: { url, apiKey, projectId: env.PROCTOR_PROJECT_ID?.trim() || null, maxAttempts: 6, maxBackoffMs: 8000, budget },
    artifactLimitBytes: Math.floor(artifactLimitMb * 1024 * 1024),
    files: filesOf(older ? positionals.slice(1) : positionals),
    attachmentRoots: rootsOf(values['attachments-root'] ?? []),
    query,
    forgiveSnoozed: Boolean(values['forgive-snoozed']),
    json: Boolean(values.json),
  };
}

function summary(answer: JunitUploadAnswer['data'], exitCode: ExitCode, forgiven: boolean): string {
  const c = answer.counts;
  const testcases = answer.files.reduce((sum, file) => sum + file.testcases, 0);
  const lines = [
    `Proctor ${runName(answer.test_run)}: ${answer.files.length} file(s), ${testcases} testcase(s) uploaded; ${c.tests} tests: ${c.passed} passed, ${c.failed} failed${c.failed_snoozed ? ` (${c.failed_snoozed} snoozed)` : ''}, ${c.flaky} flaky, ${c.skipped} skipped`,
  ];
  // Where a file's counts are not the totals it states, the server says why.
  for (const file of answer.files) for (const why of file.differences ?? []) lines.push(`  ${file.name}: ${why}`);
  for (const test of answer.failed_tests) lines.push(`  ✗ ${test.title} ${test.file_path}${test.snoozed ? ' [snoozed]' : ''}`);
  if (c.failed > answer.failed_tests.length) lines.push(`  … and ${c.failed - answer.failed_tests.length} more`);
  if (forgiven) lines.push('Every failure is snoozed: --forgive-snoozed passes the job.');
  lines.push(answer.test_run.summary_url);
  if (exitCode !== EXIT.passed) lines.push(`exit ${exitCode}`);
  return lines.join('\n');
}

/** Exit code 3 for a server that could not be reached, 2 for a refusal. */
export async function uploadCommand(args: string[], env: NodeJS.ProcessEnv): Promise<ExitCode> {
  const opened = openCommand(
    args,
    UPLOAD_USAGE,
    () => parseUploadSettings(args, env),
    (message) => process.stderr.write(`proctor: ${message}\n`),
  );
  if ('exit' in opened) return opened.exit;
  const { settings } = opened;
  const body = multipartFiles(settings.files);
  let answer: JunitUploadAnswer;
  try {
    answer = await postStream<JunitUploadAnswer>(settings.transport, `/api/test-runs/junit?${settings.query}`, body.contentType, () => body.open(), body.size);
  } catch (error) {
    const code = exitCodeOf(error);
    const message = (error as Error).message;
    if (settings.json) process.stdout.write(`${JSON.stringify({ exit_code: code, error: message }, null, 2)}\n`);
    process.stderr.write(`proctor: the upload failed: ${message}\n`);
    return code;
  }
  // The results are stored: a file that cannot be sent is said, and changes nothing of the exit code.
  const attachments = await sendNamedAttachments(settings.transport, answer.data, settings.files, settings.artifactLimitBytes, settings.attachmentRoots).catch(
    (error: Error) => ({ line: `the attachments were not sent: ${error.message}`, skipped: [], problems: [] }),
  );
  if (attachments) {
    process.stderr.write(`proctor: ${attachments.line}\n`);
    // Every skipped file is named: a test's output that names a file outside is worth a look.
    for (const skipped of attachments.skipped) process.stderr.write(`proctor: warning: ${skipped}\n`);
    for (const problem of attachments.problems.slice(0, 20)) process.stderr.write(`proctor:   ${problem}\n`);
  }
  const { counts } = answer.data;
  const unforgiven = counts.failed - (settings.forgiveSnoozed ? counts.failed_snoozed : 0);
  const exitCode = unforgiven > 0 ? EXIT.failed : EXIT.passed;
  const forgiven = settings.forgiveSnoozed && counts.failed > 0 && unforgiven === 0;
  process.stdout.write(
    settings.json ? `${JSON.stringify({ exit_code: exitCode, ...answer.data }, null, 2)}\n` : `${summary(answer.data, exitCode, forgiven)}\n`,
  );
  return exitCode;
}
