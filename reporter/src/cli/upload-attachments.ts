import fs from 'node:fs';
import path from 'node:path';
import { ArtifactUploader, describeSize } from '../artifacts.ts';
import type { AttemptAttachment } from '../attachments.ts';
import type { TransportOptions } from '../transport.ts';
import type { JunitUploadAnswer } from '../wire.ts';

/** How long the files a JUnit upload names may take to go up after it. */
const SETTLE_MS = 120_000;

/** The content type a named file is sent with, by its extension (the server checks it delivers each: test/junit/attachment-types.test.ts). */
export const ATTACHMENT_TYPES: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webm': 'video/webm',
  '.mp4': 'video/mp4',
  '.zip': 'application/zip',
  '.md': 'text/markdown',
  '.txt': 'text/plain',
  '.log': 'text/plain',
  '.json': 'application/json',
};

/** An attachment's name as Playwright's reporter would give it: screenshots, videos and traces by their kind. */
function attachmentName(file: string): string {
  const extension = path.extname(file).toLowerCase();
  const base = path.basename(file, path.extname(file));
  if (extension === '.png' || extension === '.jpg' || extension === '.jpeg') return 'screenshot';
  if (extension === '.webm' || extension === '.mp4') return 'video';
  if (extension === '.zip' && base.startsWith('trace')) return 'trace';
  return base;
}

export interface AttachmentsSent {
  /** One line for people: what went up, what was refused or missing. */
  line: string;
  problems: string[];
}

/**
 * Sends the files the upload's testcases named, each found beside the XML file that named it, as
 * the attempts' attachments (the reporter's own uploader: hashed, declared, PUT to signed URLs).
 */
export async function sendNamedAttachments(
  transport: TransportOptions,
  answer: JunitUploadAnswer['data'],
  files: string[],
  limitBytes: number,
): Promise<AttachmentsSent | null> {
  if (answer.attachments.length === 0) return null;
  const byName = new Map(files.map((file) => [path.basename(file), file]));
  const missing: string[] = [];
  const found: AttemptAttachment[] = [];
  for (const named of answer.attachments) {
    const xml = byName.get(named.file);
    const file = xml ? path.resolve(path.dirname(xml), named.path) : null;
    if (!file || !fs.statSync(file, { throwIfNoEntry: false })?.isFile()) {
      missing.push(`${named.path} (named in ${named.file}) is not there`);
      continue;
    }
    const type = ATTACHMENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
    found.push({ test_id: named.test_case_id, retry: named.retry, name: attachmentName(file), content_type: type, path: file, body: null });
  }
  const uploader = new ArtifactUploader(transport, limitBytes, () => Promise.resolve(answer.test_run.id));
  uploader.add(found);
  const report = await uploader.settle(SETTLE_MS);
  const problems = [...missing, ...report.refused, ...report.failures];
  const stored = report.alreadyStored ? `, ${report.alreadyStored} stored already` : '';
  return {
    line: `${report.uploaded} attachment(s) uploaded (${describeSize(report.uploadedBytes)})${stored}${problems.length ? `, ${problems.length} not` : ''}`,
    problems,
  };
}
