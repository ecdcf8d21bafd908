import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { Readable } from 'node:stream';
import type { AttemptAttachment } from './attachments.ts';
import { postJson, postSigned, putSigned, type TransportOptions } from '../api/transport.ts';
import { type AttachmentDeclaration, type AttachmentDisposition, type AttachmentsAnswer, type AttachmentsBody, WIRE_LIMITS } from '../api/wire.ts';

/** Files hashed and bodies uploaded at once: beside the tests, not in their way. */
const AT_ONCE = 2;
/** Declarations wait this long for company before they are sent. */
const DECLARE_AFTER_MS = 500;

export interface ArtifactReport {
  uploaded: number;
  uploadedBytes: number;
  /** Bytes the project held already (the same sha256). */
  alreadyStored: number;
  /** One line per attachment refused, by the reporter's limit or the server. */
  refused: string[];
  /** One line per attachment not delivered, and why. */
  failures: string[];
}

interface Prepared {
  attachment: AttemptAttachment;
  declaration: AttachmentDeclaration;
}

/** A small bounded pool: work starts once fewer than AT_ONCE are under way; `run` settles with it. */
class Pool {
  private readonly running = new Set<Promise<void>>();

  async run(work: () => Promise<void>): Promise<void> {
    while (this.running.size >= AT_ONCE) await Promise.race(this.running);
    const task: Promise<void> = work().finally(() => this.running.delete(task));
    this.running.add(task);
    await task;
  }
}

/** A size as the summary line states it. */
export function describeSize(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} kB`;
}

/**
 * Uploads attempts' attachments beside the results: each is hashed (files streamed, never read
 * whole), declared in batches, and its bytes PUT to the signed URL the server answers unless the
 * project holds them already. Hooks only enqueue; `settle` waits for the rest within a bound.
 */
export class ArtifactUploader {
  private readonly hashing = new Pool();
  private readonly uploading = new Pool();
  private readonly work = new Set<Promise<void>>();
  private pending: Prepared[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** Each sha256 goes up once per invocation, whatever number of attempts attach it. */
  private readonly sent = new Map<string, Promise<boolean>>();
  private readonly report: ArtifactReport = { uploaded: 0, uploadedBytes: 0, alreadyStored: 0, refused: [], failures: [] };

  constructor(
    private readonly transport: TransportOptions,
    private readonly limitBytes: number,
    /** The run to attach to once the shard has started it; null when it could not be. */
    private readonly runId: () => Promise<number | null>,
  ) {}

  add(attachments: AttemptAttachment[]): void {
    for (const attachment of attachments) this.track(this.hashing.run(() => this.prepare(attachment)));
  }

  /** Waits for every upload, or until `waitMs` has passed; what is left is reported as not delivered. */
  async settle(waitMs: number): Promise<ArtifactReport> {
    const deadline = Date.now() + waitMs;
    while (this.work.size > 0 || this.pending.length > 0) {
      this.declare();
      const left = deadline - Date.now();
      if (left <= 0) {
        this.report.failures.push(`${this.work.size} upload(s) still under way after ${Math.round(waitMs / 1000)} s were left behind`);
        break;
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(this.work), new Promise((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
    return this.report;
  }

  private track(task: Promise<void>): void {
    const tracked: Promise<void> = task.finally(() => this.work.delete(tracked));
    this.work.add(tracked);
  }

  private label(attachment: AttemptAttachment): string {
    return `${attachment.name} of ${attachment.test_id} (retry ${attachment.retry})`;
  }

  private async prepare(attachment: AttemptAttachment): Promise<void> {
    try {
      const size = attachment.body ? attachment.body.length : (await fs.promises.stat(attachment.path as string)).size;
      if (size > this.limitBytes) {
        this.report.refused.push(
          `${this.label(attachment)}: ${describeSize(size)} is over the limit of ${describeSize(this.limitBytes)} (PROCTOR_ARTIFACT_LIMIT_MB)`,
        );
        return;
      }
      const declaration: AttachmentDeclaration = {
        test_id: attachment.test_id,
        retry: attachment.retry,
        name: attachment.name.slice(0, WIRE_LIMITS.attachmentName),
        content_type: attachment.content_type.slice(0, WIRE_LIMITS.contentType),
        sha256: await sha256Of(attachment),
        size_bytes: size,
      };
      this.pending.push({ attachment, declaration });
      if (this.pending.length >= WIRE_LIMITS.attachmentsPerRequest) this.declare();
      else this.timer ??= setTimeout(() => this.declare(), DECLARE_AFTER_MS);
    } catch (error) {
      this.report.failures.push(`${this.label(attachment)}: could not read it: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }

  private declare(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.track(this.declareBatch(batch));
  }

  private async declareBatch(batch: Prepared[]): Promise<void> {
    const runId = await this.runId();
    if (runId === null) {
      this.report.failures.push(`${batch.length} attachment(s): no run to attach them to`);
      return;
    }
    let answer: AttachmentsAnswer;
    try {
      answer = await postJson<AttachmentsAnswer>(this.transport, `/api/test-runs/${runId}/attachments`, {
        attachments: batch.map((p) => p.declaration),
      } satisfies AttachmentsBody);
    } catch (error) {
      this.report.failures.push(`${batch.length} attachment(s) not declared: ${(error as Error).message}`);
      return;
    }
    batch.forEach((prepared, i) => {
      const disposition = answer.data.attachments[i];
      if (!disposition || disposition.status === 'stored') {
        this.report.alreadyStored++;
      } else if (disposition.status === 'refused') {
        this.report.refused.push(`${this.label(prepared.attachment)}: ${disposition.reason ?? 'refused by the server'}`);
      } else if (disposition.upload_url) {
        this.track(this.upload(prepared, disposition));
      }
    });
  }

  /** A URL the server answered, relative to the one this reporter reached it at unless absolute. */
  private resolve(url: string): string {
    return new URL(url, `${this.transport.url}/`).toString();
  }

  private async upload(prepared: Prepared, disposition: AttachmentDisposition): Promise<void> {
    const { sha256 } = prepared.declaration;
    const earlier = this.sent.get(sha256);
    if (earlier) {
      if (await earlier) this.report.alreadyStored++;
      return;
    }
    let done!: (ok: boolean) => void;
    this.sent.set(sha256, new Promise<boolean>((resolve) => (done = resolve)));
    await this.uploading.run(async () => {
      try {
        const { attachment, declaration } = prepared;
        await putSigned(
          this.transport,
          this.resolve(disposition.upload_url as string),
          () => openBytes(attachment),
          declaration.size_bytes,
          disposition.upload_headers ?? {},
        );
        if (disposition.confirm_url) await postSigned(this.transport, this.resolve(disposition.confirm_url));
        this.report.uploaded++;
        this.report.uploadedBytes += declaration.size_bytes;
        done(true);
      } catch (error) {
        this.report.failures.push(`${this.label(prepared.attachment)}: ${(error as Error).message}`);
        this.sent.delete(sha256);
        done(false);
      }
    });
  }
}

function openBytes(attachment: AttemptAttachment): NodeJS.ReadableStream {
  return attachment.body ? Readable.from([attachment.body]) : fs.createReadStream(attachment.path as string);
}

async function sha256Of(attachment: AttemptAttachment): Promise<string> {
  const hash = createHash('sha256');
  if (attachment.body) return hash.update(attachment.body).digest('hex');
  for await (const chunk of fs.createReadStream(attachment.path as string)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
