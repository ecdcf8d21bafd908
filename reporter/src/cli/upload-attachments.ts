import fs from 'node:fs';
import path from 'node:path';
import { ArtifactUploader, describeSize } from '../reporter/artifacts.ts';
import type { AttemptAttachment } from '../reporter/attachments.ts';
import type { TransportOptions } from '../api/transport.ts';
import type { JunitUploadAnswer } from '../api/wire.ts';
import { partName } from './multipart.ts';

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
  /** Files left unsent because they lie outside the folders they may come from: each named, always said. */
  skipped: string[];
  problems: string[];
}

/** The real path of a folder (symbolic links resolved), or null when it is not a folder. */
export function realFolder(folder: string): string | null {
  try {
    const real = fs.realpathSync(folder);
    return fs.statSync(real).isDirectory() ? real : null;
  } catch {
    return null;
  }
}

function isUnder(file: string, folder: string): boolean {
  const relative = path.relative(folder, file);
  return relative !== '' && !relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative);
}

type Found = { kind: 'file'; named: string; real: string } | { kind: 'missing' } | { kind: 'outside'; real: string };

/**
 * Where a path an XML file names leads, judged by the real path (symbolic links resolved) of both
 * the file and the folders: only a file under the XML file's own folder or an --attachments-root
 * may be sent. Test output is text anyone who writes a test controls; without this, `../` or an
 * absolute path would send the CI machine's `.git/config`, `~/.npmrc` or SSH keys to every reader.
 */
function locate(xml: string, named: string, roots: string[]): Found {
  const candidate = path.resolve(path.dirname(xml), named);
  let real: string;
  try {
    real = fs.realpathSync(candidate);
    if (!fs.statSync(real).isFile()) return { kind: 'missing' };
  } catch {
    return { kind: 'missing' };
  }
  const xmlFolder = realFolder(path.dirname(xml));
  const allowed = [...(xmlFolder ? [xmlFolder] : []), ...roots];
  return allowed.some((folder) => isUnder(real, folder)) ? { kind: 'file', named: candidate, real } : { kind: 'outside', real };
}

/**
 * Sends the files the upload's testcases named, each found beside the XML file that named it (or
 * under an --attachments-root, `roots`, given as real paths), as the attempts' attachments (the
 * reporter's own uploader: hashed, declared, PUT to signed URLs). Any other file is skipped and named.
 */
export async function sendNamedAttachments(
  transport: TransportOptions,
  answer: JunitUploadAnswer['data'],
  files: string[],
  limitBytes: number,
  roots: string[] = [],
): Promise<AttachmentsSent | null> {
  if (answer.attachments.length === 0) return null;
  // The server names each XML file as its part was named; files of one name in two folders are each tried.
  const byName = new Map<string, string[]>();
  for (const file of files) byName.set(partName(file), [...(byName.get(partName(file)) ?? []), file]);
  const missing: string[] = [];
  const skipped: string[] = [];
  const found: AttemptAttachment[] = [];
  for (const named of answer.attachments) {
    const places = (byName.get(named.file) ?? []).map((xml) => locate(xml, named.path, roots));
    const file = places.find((place) => place.kind === 'file');
    const outside = places.find((place) => place.kind === 'outside');
    if (!file && outside) {
      const where = named.path === outside.real ? '' : ` (${outside.real})`;
      skipped.push(`skipped ${named.path}${where}, named in ${named.file}: it is outside ${named.file}'s folder and every --attachments-root`);
      continue;
    }
    if (!file) {
      missing.push(`${named.path} (named in ${named.file}) is not there`);
      continue;
    }
    const type = ATTACHMENT_TYPES[path.extname(file.named).toLowerCase()] ?? 'application/octet-stream';
    // Read from the real path checked above, not again through the links.
    found.push({ test_id: named.test_case_id, retry: named.retry, name: attachmentName(file.named), content_type: type, path: file.real, body: null });
  }
  const uploader = new ArtifactUploader(transport, limitBytes, () => Promise.resolve(answer.test_run.id));
  uploader.add(found);
  const report = await uploader.settle(SETTLE_MS);
  const problems = [...missing, ...report.refused, ...report.failures];
  const stored = report.alreadyStored ? `, ${report.alreadyStored} stored already` : '';
  const notSent = problems.length + skipped.length;
  return {
    line: `${report.uploaded} attachment(s) uploaded (${describeSize(report.uploadedBytes)})${stored}${notSent ? `, ${notSent} not` : ''}${skipped.length ? ` (${skipped.length} skipped: outside the allowed folders)` : ''}`,
    skipped,
    problems,
  };
}
