import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { Actor } from '../audit/index.ts';
import { DAY_MS } from '../context.ts';
import { type Sql, takesCopyFromStdin, type Tx } from '../db.ts';
import { InvalidInputError } from '../errors.ts';
import { attachShardFailures } from '../failuregroups/index.ts';
import {
  type Attempt,
  beginUploadShard,
  endUploadShard,
  recordUploadBatch,
  type ResultWrite,
  startedNoLaterThan,
  TestRecordedAlreadyError,
  type UploadShard,
  uploadedResults,
} from '../runs/index.ts';
import type { ListedTest } from '../testcases/index.ts';
import { attachmentsOf, attemptsOf, countDifferences, type FileCounts, FileGrouper, type GroupedTest, listedTest } from './attempts.ts';
import type { UploadedFile } from './multipart.ts';
import { detectFormat, READ_FORMATS, readerFor, type ResultFileReader, type ResultFormat } from './formats/index.ts';
import { type JunitCase, JunitFileError, type JunitTimes } from './read.ts';
import { JUNIT_LIMITS, type JunitUploadAnswer, type JunitUploadQuery } from './schema.ts';
import { Spool, type SpooledFile } from './spool.ts';
import { resultsIngested } from '../metrics.ts';

// An upload of report files (JUnit XML and the other formats of formats/): one shard of a run
// (the run of its key, made by the build's first upload). Received whole first, as it streams
// in: each file written to a private spool on disk, within the size limit, touching no database;
// a client that goes away or stalls meanwhile holds no lock and no connection. Only then, in one
// transaction, the files are read from disk into batches of rows, each batch written while the
// next is read (the server's parsing and the database's writing overlap); a file that fails rolls
// the transaction back and leaves nothing of the upload behind
// (docs/decisions/junit-upload-pipeline.md).

/** A file of the upload as read: what the answer says of it (its counts, its totals, why they differ), and when its tests ran. */
export type ReadFile = JunitUploadAnswer['files'][number] & { times: JunitTimes };

export interface UploadOutcome {
  runId: number;
  files: Omit<ReadFile, 'times'>[];
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
    `testcase "${start.name}"${start.classname ? ` of ${start.classname}` : ''} appears again in another file of this upload, or in another upload of this run: a test is in one file of a run (for Playwright with several projects, set the junit reporter's includeProjectInTestName)`,
  );
}

/** The characters an attempt holds as text (its output, its errors, its stack), for the batch's bound. */
function textOf(attempt: Attempt): number {
  const final = attempt.final;
  const frames = final?.stack_frames?.reduce((sum, frame) => sum + frame.length, 0) ?? 0;
  return (
    (attempt.stdout_tail?.length ?? 0) +
    (attempt.stderr_tail?.length ?? 0) +
    (attempt.error_message?.length ?? 0) +
    (final?.error_message?.length ?? 0) +
    frames
  );
}

/** The batch being filled: each file's testcases grouped into tests (`FileGrouper`), a test's rows added as it is complete. */
class Batcher {
  private tests: ListedTest[] = [];
  private attempts: Attempt[] = [];
  /** The characters of the batch's text: its attempts' output, errors and stacks. */
  private chars = 0;
  private grouper: FileGrouper | null = null;
  private file = '';
  /** What the testcases' output names, for the client to send (bounded). */
  readonly attachments: NamedAttachment[] = [];
  /** Where each test of the batch starts: a test another file or shard recorded is refused with its place. Memory by batch, not by file. */
  private starts = new Map<string, TestStart>();
  private readonly places = new Map<string, string>();
  constructor(private readonly sink: (batch: Batch) => Promise<void>) {}

  /** A file begins: its testcases are grouped apart from other files'. */
  startFile(file: string): void {
    this.file = file;
    this.grouper = new FileGrouper(this.places, (test) => this.addTest(test));
  }

  add(testcase: JunitCase): void {
    this.grouper?.add(testcase);
  }

  private addTest({ id, testcases, rule }: GroupedTest): void {
    const first = testcases[0] as JunitCase;
    if (this.starts.has(id)) throw repeated({ file: this.file, line: first.atLine, name: first.name, classname: first.classname });
    this.starts.set(id, { file: this.file, line: first.atLine, name: first.name, classname: first.classname });
    this.tests.push(listedTest(first, id));
    for (const attempt of attemptsOf(testcases, id, rule)) {
      this.attempts.push(attempt);
      this.chars += textOf(attempt);
    }
    for (const named of attachmentsOf(testcases, id, rule)) {
      if (this.attachments.length < JUNIT_LIMITS.attachmentsPerUpload) this.attachments.push({ file: this.file, ...named });
    }
  }

  /** The file has ended: its last test is complete (a test's runs never span files); what its testcases came to. */
  endFile(): FileCounts {
    const counts = this.grouper?.end() as FileCounts;
    this.grouper = null;
    return counts;
  }

  get full(): boolean {
    return this.attempts.length >= JUNIT_LIMITS.batch || this.chars >= JUNIT_LIMITS.batchChars;
  }

  /** Hands the batch on, with where each of its tests starts (for a test an earlier batch or shard recorded). */
  async flush(): Promise<void> {
    if (this.tests.length === 0) return;
    const batch: Batch = { tests: this.tests, attempts: this.attempts, starts: this.starts };
    this.tests = [];
    this.attempts = [];
    this.chars = 0;
    this.starts = new Map();
    await this.sink(batch);
  }
}

interface Batch {
  tests: ListedTest[];
  attempts: Attempt[];
  starts: Map<string, TestStart>;
}

/** The reader of a file: the format the upload forces, else the one its first chunk shows; none found is a 400 naming the file. */
function readerOf(file: SpooledFile, head: string, forced: ResultFormat | undefined, batcher: Batcher): { format: ResultFormat; reader: ResultFileReader } {
  const format = forced ?? detectFormat(file.name, head);
  if (!format) {
    const what = head.trim() === '' ? 'is empty' : 'is in no format Proctor reads';
    throw new JunitFileError(file.name, 1, `${what}: Proctor reads ${READ_FORMATS}, detected from the content (or named by the upload's format)`);
  }
  return { format, reader: readerFor(format)(file.name, (testcase) => batcher.add(testcase)) };
}

/**
 * One spooled file's testcases into the batcher, from disk, read by its format's reader (a TRX
 * file may be read twice: `ResultFileReader.again`); a broken file is a 400 naming it and its line.
 */
async function readFile(file: SpooledFile, batcher: Batcher, signal: AbortSignal, forced: ResultFormat | undefined): Promise<ReadFile> {
  batcher.startFile(file.name);
  let chosen: { format: ResultFormat; reader: ResultFileReader } | null = null;
  // The format from the first chunk (a quarter MB: past any prolog a runner writes).
  const first = (head: string) => {
    if (head && !chosen) chosen = readerOf(file, head, forced, batcher);
  };
  const take = (text: string) => chosen?.reader.write(text);
  do {
    await eachSlice(file.path, batcher, signal, first, take);
    chosen ??= readerOf(file, '', forced, batcher);
    chosen.reader.end();
  } while (chosen.reader.again?.());
  const { format, reader } = chosen;
  const counts = batcher.endFile();
  return {
    name: file.name,
    format,
    testcases: reader.cases,
    tests: counts.tests,
    failures: counts.failures,
    errors: counts.errors,
    skipped: counts.skipped,
    totals: reader.totals,
    differences: countDifferences(counts, reader.totals),
    times: reader.times,
  };
}

/** A file's text from disk: its first chunk to `first`, then all of it in slices to `take`, the batch flushed as it fills. */
async function eachSlice(path: string, batcher: Batcher, signal: AbortSignal, first: (head: string) => void, take: (text: string) => void): Promise<void> {
  const decoder = new TextDecoder('utf-8');
  let yielded = performance.now();
  for await (const chunk of fs.createReadStream(path, { highWaterMark: READ_BYTES })) {
    const text = decoder.decode(chunk as Buffer, { stream: true });
    first(text);
    // In slices, giving way to other requests every few milliseconds: a chunk of small testcases is a thousand of them.
    for (let at = 0; at < text.length; at += SLICE_CHARS) {
      take(text.length <= SLICE_CHARS ? text : text.slice(at, at + SLICE_CHARS));
      if (batcher.full) await batcher.flush();
      if (performance.now() - yielded > YIELD_AFTER_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        if (signal.aborted) throw signal.reason;
        yielded = performance.now();
      }
    }
  }
  const rest = decoder.decode();
  if (rest) {
    first(rest);
    take(rest);
  }
}

/**
 * Text read between two looks at the clock; past YIELD_AFTER_MS since the last, the event loop gets
 * its turn. Short: the batch being written waits for that turn after each of its statements, the
 * database idle meanwhile.
 */
const SLICE_CHARS = 4096;
const YIELD_AFTER_MS = 2;
const READ_BYTES = 256 * 1024;

interface ReadOptions {
  fileMb: number;
  /** The client gone or stalled: reading stops at once with its reason. */
  signal: AbortSignal;
}

/** An upload received whole, its files on disk; `spool.remove()` when done with it. */
export interface ReadUpload {
  spool: Spool;
}

/** Receives every file of an upload to disk, touching no database: a part that breaks off or is too large is a 400 naming it. */
export async function readJunitUpload(files: AsyncIterable<UploadedFile>, options: ReadOptions): Promise<ReadUpload> {
  const spool = await Spool.open();
  try {
    for await (const file of files) await spool.receive(file, options);
    if (spool.files.length === 0)
      throw new InvalidInputError(
        'body: holds no file; an upload is one or more report files (JUnit XML, TRX, NUnit…), the parts of a multipart/form-data body',
      );
    return { spool };
  } catch (error) {
    await spool.remove();
    throw error;
  }
}

/**
 * Reads a received upload and writes it as its shard, in one transaction that waits on nothing
 * but the server's disk and the database: one batch is written while the next is read. `signal`
 * (the client gone) rolls it back. The spool is the caller's to remove.
 */
export async function storeJunitUpload(
  sql: Sql,
  projectId: number,
  query: JunitUploadQuery,
  upload: ReadUpload,
  options: { now: Date; signal: AbortSignal; actor: Actor },
): Promise<UploadOutcome> {
  const write: ResultWrite = (await takesCopyFromStdin(sql)) ? 'copy' : 'insert';
  let recorded = 0;
  const outcome = await sql.begin(async (tx) => {
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
    // A retried upload whose shard is stored stores nothing again.
    if (shard.uploadedBefore) return { runId: shard.runId, files: [], attachments: [], ...(await uploadedResults(tx, shard, 100)) };
    // One batch in the database while the next is read: a batch waits for the one before it.
    let writing: Promise<void> = Promise.resolve();
    const batcher = new Batcher(async (batch) => {
      await writing;
      if (options.signal.aborted) throw options.signal.reason;
      writing = recordBatch(tx, projectId, shard, batch, write, options.now).then(() => void (recorded += batch.attempts.length));
      writing.catch(() => undefined);
    });
    const files: ReadFile[] = [];
    try {
      for (const file of upload.spool.files) files.push(await readFile(file, batcher, options.signal, query.format));
      await batcher.flush();
    } finally {
      // Never leave a write running on the transaction: its outcome (or the reading's error) decides.
      await writing.catch(() => undefined);
    }
    await writing;
    await startedNoLaterThan(tx, shard.runId, testsBegan(files, options.now));
    // As the reporter attaches each failure to its group: the groups are there when the run's notifications are composed.
    await attachShardFailures(tx, projectId, shard.runId, shard.shard, attachedBy(options.actor), options.now);
    await endUploadShard(tx, projectId, shard, options.now);
    return {
      runId: shard.runId,
      files: files.map(({ times: _times, ...file }) => file),
      attachments: batcher.attachments,
      ...(await uploadedResults(tx, shard, 100)),
    };
  });
  resultsIngested.inc({ source: 'upload' }, recorded);
  return outcome;
}

/**
 * When the upload's tests began, as its files say: the earliest zoned `timestamp` of their
 * testsuites, else `now` less the seconds they took together (files of one job run one after
 * another).
 */
export function testsBegan(files: ReadFile[], now: Date): Date {
  const seconds = files.reduce((sum, file) => sum + file.times.seconds, 0);
  // A file that says its tests began more than a day ago is believed only for its times.
  const byTimes = now.getTime() - Math.min(Math.round(seconds * 1000), DAY_MS);
  const starts = files.map((file) => file.times.startMs).filter((at): at is number => at !== null && at <= now.getTime() && at >= now.getTime() - DAY_MS);
  return new Date(starts.length > 0 ? Math.min(...starts) : byTimes);
}

function attachedBy(actor: Actor): { source: 'machine' | 'human'; actorId: string | null } {
  return actor.kind === 'user' ? { source: 'human', actorId: actor.id } : { source: 'machine', actorId: null };
}

/** A batch's rows; a test an earlier batch (or shard) recorded is found by the database, and named by where the batch saw it start. */
async function recordBatch(tx: Tx, projectId: number, shard: UploadShard, batch: Batch, write: ResultWrite, now: Date): Promise<void> {
  try {
    await recordUploadBatch(tx, projectId, shard, { tests: batch.tests, attempts: batch.attempts }, write, now);
  } catch (error) {
    const start = error instanceof TestRecordedAlreadyError ? batch.starts.get(error.testId) : undefined;
    throw start ? repeated(start) : error;
  }
}
