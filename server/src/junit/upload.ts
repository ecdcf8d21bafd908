import { randomUUID } from 'node:crypto';
import type { Actor } from '../audit/index.ts';
import { type Sql, takesCopyFromStdin, type Tx } from '../db.ts';
import { InvalidInputError } from '../errors.ts';
import {
  type Attempt,
  beginUploadShard,
  endUploadShard,
  recordUploadBatch,
  type ResultWrite,
  TestRecordedAlreadyError,
  type UploadShard,
  uploadedResults,
} from '../runs/index.ts';
import type { ListedTest } from '../testcases/index.ts';
import { attachmentsOf, attemptsOf, junitTestId, listedTest } from './attempts.ts';
import type { UploadedFile } from './multipart.ts';
import { type JunitCase, JunitFileError, JunitReader } from './read.ts';
import { JUNIT_LIMITS, type JunitUploadQuery } from './schema.ts';

// An upload of JUnit XML files: one shard of a run (the run of its key, made by the build's first
// upload), read as it streams in and written in batches, all in one transaction: a file that
// fails leaves nothing of the upload behind.

export interface UploadOutcome {
  runId: number;
  files: { name: string; testcases: number }[];
  attachments: NamedAttachment[];
  counts: Awaited<ReturnType<typeof uploadedResults>>['counts'];
  failed: Awaited<ReturnType<typeof uploadedResults>>['failed'];
}

interface NamedAttachment {
  file: string;
  path: string;
  test_case_id: string;
  retry: number;
}

interface TestStart {
  file: string;
  line: number;
  name: string;
  classname: string;
}

function repeated(start: TestStart): JunitFileError {
  return new JunitFileError(
    start.file,
    start.line,
    `testcase "${start.name}"${start.classname ? ` of ${start.classname}` : ''} appears again after other testcases (or in another upload of this run): one test's runs follow each other (for Playwright with several projects, set the junit reporter's includeProjectInTestName)`,
  );
}

/** The batch being filled: a test's testcases are held until a testcase of another test comes (they may be its retries). */
class Batcher {
  private tests: ListedTest[] = [];
  private attempts: Attempt[] = [];
  private group: JunitCase[] = [];
  private groupId: string | null = null;
  private groupFile = '';
  /** What the testcases' output names, for the client to send (bounded). */
  readonly attachments: NamedAttachment[] = [];
  /** Where each test of the batch starts: a test seen again is refused with both places. Memory by batch, not by file. */
  private starts = new Map<string, TestStart>();
  private readonly places = new Map<string, string>();
  /** The batch being written while the next is read: one at a time, in order, on the upload's transaction. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly tx: Tx,
    private readonly projectId: number,
    private readonly shard: UploadShard,
    private readonly write: ResultWrite,
    private readonly now: Date,
  ) {}

  add(file: string, testcase: JunitCase): void {
    const id = junitTestId(testcase, this.places);
    if (id === this.groupId) {
      this.group.push(testcase);
      return;
    }
    if (this.starts.has(id)) throw repeated({ file, line: testcase.atLine, name: testcase.name, classname: testcase.classname });
    this.closeGroup();
    this.starts.set(id, { file, line: testcase.atLine, name: testcase.name, classname: testcase.classname });
    this.groupId = id;
    this.groupFile = file;
    this.group = [testcase];
  }

  /** The last test of a file is complete: a test's runs never span files. */
  closeGroup(): void {
    if (this.group.length === 0) return;
    this.tests.push(listedTest(this.group[0] as JunitCase, this.groupId as string));
    this.attempts.push(...attemptsOf(this.group, this.groupId as string));
    for (const named of attachmentsOf(this.group, this.groupId as string)) {
      if (this.attachments.length < JUNIT_LIMITS.attachmentsPerUpload) this.attachments.push({ file: this.groupFile, ...named });
    }
    this.group = [];
    this.groupId = null;
  }

  get full(): boolean {
    return this.attempts.length >= JUNIT_LIMITS.batch;
  }

  /**
   * Sends the batch once the one before is written, and returns while it is written, so that the
   * file is read on meanwhile: reading and writing take about as long each.
   */
  async flush(): Promise<void> {
    await this.writing;
    if (this.tests.length === 0) return;
    const batch = { tests: this.tests, attempts: this.attempts };
    const starts = this.starts;
    this.tests = [];
    this.attempts = [];
    this.starts = new Map();
    // A test an earlier batch (or shard) recorded is found by the database: the batch knows its place.
    this.writing = recordUploadBatch(this.tx, this.projectId, this.shard, batch, this.write, this.now).catch((error: unknown) => {
      const start = error instanceof TestRecordedAlreadyError ? starts.get(error.testId) : undefined;
      throw start ? repeated(start) : error;
    });
    // Awaited by the next flush or by `finish`; a failure meanwhile is not unhandled.
    this.writing.catch(() => undefined);
  }

  /** Everything read is written. */
  async finish(): Promise<void> {
    await this.flush();
    await this.writing;
  }
}

async function readFile(file: UploadedFile, batcher: Batcher, fileMb: number): Promise<number> {
  const reader = new JunitReader(file.name, (testcase) => batcher.add(file.name, testcase));
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of file.stream) {
    reader.write(decoder.decode(chunk as Buffer, { stream: true }));
    if (batcher.full) await batcher.flush();
  }
  if (file.truncated()) throw new JunitFileError(file.name, reader.line, `is larger than the upload limit of ${fileMb} MB a file (PROCTOR_UPLOAD_LIMIT_MB)`);
  reader.write(decoder.decode());
  reader.end();
  batcher.closeGroup();
  return reader.cases;
}

/** Reads what is left of an upload without storing it (a retried upload whose shard is stored). */
async function drain(files: AsyncIterable<UploadedFile>): Promise<void> {
  for await (const file of files) file.stream.resume();
}

export async function uploadJunit(
  sql: Sql,
  projectId: number,
  query: JunitUploadQuery,
  files: AsyncIterable<UploadedFile>,
  options: { fileMb: number; now: Date; actor: Actor },
): Promise<UploadOutcome> {
  const write: ResultWrite = (await takesCopyFromStdin(sql)) ? 'copy' : 'insert';
  return sql.begin(async (tx) => {
    const shard = await beginUploadShard(
      tx,
      projectId,
      {
        environment: query.environment,
        // Without a key the upload is a run of its own.
        runKey: query.run_key ?? `upload-${randomUUID()}`,
        shard: query.shard,
        totalShards: query.total_shards,
        branch: query.branch ?? null,
        commit: query.commit ?? null,
        buildUrl: query.build_url ?? null,
        pullRequest: query.pull_request ?? null,
        actor: options.actor,
      },
      options.now,
    );
    const read: UploadOutcome['files'] = [];
    let attachments: NamedAttachment[] = [];
    if (shard.uploadedBefore) await drain(files);
    else {
      const batcher = new Batcher(tx, projectId, shard, write, options.now);
      attachments = batcher.attachments;
      for await (const file of files) read.push({ name: file.name, testcases: await readFile(file, batcher, options.fileMb) });
      if (read.length === 0)
        throw new InvalidInputError('body: holds no file; an upload is one or more JUnit XML files, the parts of a multipart/form-data body');
      await batcher.finish();
      await endUploadShard(tx, projectId, shard, options.now);
    }
    const results = await uploadedResults(tx, shard, 100);
    return { runId: shard.runId, files: read, attachments, ...results };
  });
}
