import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { EmbeddedSocketServer } from '../server/src/embedded-socket.ts';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Set when no DATABASE_URL is given: one embedded PostgreSQL shared by every test file. */
    embeddedDatabaseUrl: string | null;
  }
}

/**
 * With DATABASE_URL, each test file makes its own throwaway database on that server. Without it,
 * one embedded PostgreSQL serves every file (PGlite has a single database), and files keep apart
 * by making their own projects.
 */
export default async function setup(project: TestProject) {
  // Playwright loads the reporter as the compiled package entry, as a user's config would.
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'reporter/tsconfig.json'], { stdio: 'inherit' });
  // npm links a package's command only when its file exists: on a fresh clone, `npm ci` ran before
  // reporter/dist was built, and the documented `npx @proctor/reporter …` lines need proctor-ci.
  if (!fs.existsSync('node_modules/.bin/proctor-ci')) execFileSync('npm', ['rebuild', '@proctor/reporter', '--ignore-scripts'], { stdio: 'inherit' });
  if (process.env.DATABASE_URL) {
    project.provide('embeddedDatabaseUrl', null);
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-test-pglite-'));
  const db = await PGlite.create({ dataDir: dir });
  const server = new EmbeddedSocketServer(db, 40);
  const port = await server.listen({ host: '127.0.0.1', port: 0 });
  project.provide('embeddedDatabaseUrl', `postgres://postgres@127.0.0.1:${port}/postgres`);
  return async () => {
    await server.close();
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
