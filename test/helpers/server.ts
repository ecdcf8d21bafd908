import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Jobs } from '../../server/src/executor/jobs.ts';
import { FileStorage } from '../../server/src/storage/blobs.ts';
import { openStorage } from '../../server/src/storage/open.ts';
import { Writable } from 'node:stream';
import { createKey } from '../../server/src/auth/store.ts';
import { loadConfig } from '../../server/src/config.ts';
import type { Sql } from '../../server/src/db.ts';
import { createLogger } from '../../server/src/logger.ts';
import { addMember, createProject } from '../../server/src/projects/store.ts';
import { createUser } from '../../server/src/users/store.ts';
import type { KeyScope, Role } from '../../server/src/principals.ts';
import { serveInProcess } from './app.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

/** A clock the test moves by hand: frozen at a time, or 'live' (real time plus what was advanced). */
export class TestClock {
  private frozen: Date | null;
  private offsetMs = 0;
  constructor(start: Date | 'live' = new Date()) {
    this.frozen = start === 'live' ? null : start;
  }
  get now(): Date {
    return this.frozen ? new Date(this.frozen) : new Date(Date.now() + this.offsetMs);
  }
  set now(date: Date) {
    if (this.frozen) this.frozen = new Date(date);
    else this.offsetMs = date.getTime() - Date.now();
  }
  readonly read = () => this.now;
  advance(ms: number): void {
    if (this.frozen) this.frozen = new Date(this.frozen.getTime() + ms);
    else this.offsetMs += ms;
  }
}

export interface TestServer {
  url: string;
  filesDir: string;
  sql: Sql;
  db: TestDatabase;
  clock: TestClock;
  /** Every log line the app wrote. */
  logs: string[];
  close(): Promise<void>;
}

/** The app in this process on a port of its own, over the test file's database. */
export async function startTestServer(
  options: { env?: Record<string, string>; clock?: TestClock; executor?: boolean; writeRollups?: boolean; retention?: boolean } = {},
): Promise<TestServer> {
  const db = await createTestDatabase();
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-files-'));
  // Traversable, as a server's data directory is, so that the runner user reaches its work folders.
  fs.chmodSync(filesDir, 0o711);
  const config = loadConfig({
    PORT: '0',
    DATABASE_URL: db.url,
    PROCTOR_DATA_DIR: filesDir,
    PROCTOR_SIGNING_SECRET: 'test-signing-secret-0123456789',
    // Jobs look for work often here: a test waits on them.
    PROCTOR_EXECUTOR_POLL_MS: '100',
    PROCTOR_HEARTBEAT_MS: '500',
    // Every JSON answer is checked against its documented schema: drift fails the test that meets it.
    PROCTOR_CHECK_RESPONSES: 'true',
    ...options.env,
  });
  const clock = options.clock ?? new TestClock();
  // Files straight under filesDir, where tests look for them; a bucket when the env names one.
  const storage = config.s3 ? await openStorage(config) : new FileStorage(filesDir);
  const jobs = new Jobs(db.sql, clock.read, createLogger('info', sink), config);
  const served = await serveInProcess({
    jobs,
    sql: db.sql,
    config,
    logger: createLogger('info', sink),
    clock: clock.read,
    signingSecret: config.signingSecret as string,
    storage,
  });
  const url = served.url;
  // Syncs are jobs: this server runs them, as one that executes runs does; runs only when asked.
  jobs.start(url, {
    executeRuns: options.executor ?? false,
    runSyncs: true,
    writeRollups: options.writeRollups ?? true,
    // A pass at start would race what a test seeds: only where a test asks for the job.
    deleteExpired: options.retention ? storage : null,
    sendNotifications: { signingSecret: config.signingSecret as string },
    compareScreenshots: storage,
  });
  return {
    url,
    filesDir,
    sql: db.sql,
    db,
    clock,
    logs,
    close: async () => {
      await jobs.stop();
      await served.close();
      await db.drop();
      fs.rmSync(filesDir, { recursive: true, force: true });
    },
  };
}

export interface SeededProject {
  projectId: number;
  key: string;
}

let seeded = 0;

export async function seedProject(sql: Sql, name = `project ${++seeded}`): Promise<SeededProject> {
  const project = await createProject(sql, { name, repoUrl: '/nonexistent', repoName: `acme/${name.replace(/\W+/g, '-')}` });
  return { projectId: project.id, key: await createKey(sql, { projectId: project.id }) };
}

/** A person in the projects with `role` (admin unless said), and a personal key of `scope` (admin unless said). */
export async function seedUser(
  sql: Sql,
  projectIds: number[],
  options: { role?: Role; scope?: KeyScope; email?: string } = {},
): Promise<{ userId: string; key: string; email: string }> {
  const email = options.email ?? `user${Date.now()}${++seeded}@example.com`;
  const userId = await createUser(sql, { email, name: `User ${++seeded}`, picture: '' });
  for (const projectId of projectIds) await addMember(sql, projectId, userId, options.role ?? 'admin');
  return { userId, email, key: await createKey(sql, { userId }, options.scope ?? 'admin') };
}

export async function seedEnvironment(sql: Sql, projectId: number, slug = 'staging'): Promise<number> {
  const [row] = await sql<{ id: number }[]>`
    insert into environments (project_id, slug, name) values (${projectId}, ${slug}, ${slug}) returning id`;
  return (row as { id: number }).id;
}

/** A project with one environment of `slug`, and the project's key. */
export async function seedProjectWithEnvironment(sql: Sql, slug: string): Promise<SeededProject & { environmentId: number }> {
  const project = await seedProject(sql);
  return { ...project, environmentId: await seedEnvironment(sql, project.projectId, slug) };
}

/** A finished run row, for tests of things that only refer to runs. */
export async function seedRun(sql: Sql, projectId: number, environmentId: number): Promise<number> {
  const [row] = await sql<{ id: number }[]>`
    insert into test_runs (project_id, environment_id, state, origin) values (${projectId}, ${environmentId}, 'passed', 'api')
    returning id`;
  return (row as { id: number }).id;
}

/** A runner-style 41-character test id. */
export function testId(n: number): string {
  const hex = n.toString(16).padStart(20, '0');
  return `${hex}-${'a'.repeat(20)}`;
}
