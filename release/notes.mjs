#!/usr/bin/env node
// The release notes of a tag: `node release/notes.mjs v1.2.3` prints CHANGELOG.md's section of
// 1.2.3, and refuses (exit 1, one line) a tag that is not the version every package carries or a
// version the changelog has no section for. The release workflow runs it before it publishes.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const MANIFESTS = ['package.json', 'server/package.json', 'reporter/package.json', 'badge/package.json', 'action/package.json'];

export function versions() {
  return Object.fromEntries(MANIFESTS.map((file) => [file, JSON.parse(fs.readFileSync(path.join(root, file), 'utf8')).version]));
}

/** The changelog's section of `version`, without its heading; null when it has none. */
export function section(changelog, version) {
  const escaped = version.replace(/\./g, '\\.');
  const match = new RegExp(`^## \\[${escaped}\\] - \\d{4}-\\d{2}-\\d{2}\\n([\\s\\S]*?)(?=^## |(?![\\s\\S]))`, 'm').exec(changelog);
  return match ? match[1].trim() : null;
}

export function notesFor(tag) {
  const version = tag.replace(/^v/, '');
  const mismatched = Object.entries(versions()).filter(([, v]) => v !== version);
  if (mismatched.length > 0) throw new Error(`tag ${tag} is not the version of ${mismatched.map(([file, v]) => `${file} (${v})`).join(', ')}`);
  const notes = section(fs.readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8'), version);
  if (!notes) throw new Error(`CHANGELOG.md has no section "## [${version}] - <date>"`);
  return notes;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  try {
    process.stdout.write(`${notesFor(process.argv[2] ?? '')}\n`);
  } catch (error) {
    console.error(`release notes: ${error.message}`);
    process.exit(1);
  }
}
