import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * A file of its own text (its name and a random number, so no two are alike), and that text's
 * sha256: what the server holds if the file was sent.
 */
export function planted(file: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const text = `${path.basename(file)} ${Math.random()}`;
  fs.writeFileSync(file, text);
  return createHash('sha256').update(text).digest('hex');
}
