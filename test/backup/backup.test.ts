import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { type TestDatabase, throwawayDatabase } from '../helpers/database.ts';
import { client } from '../helpers/http.ts';
import { freePort, type ServerProcess, spawnProctor, waitForHealth } from '../helpers/process.ts';
import { printedKey } from '../helpers/release.ts';
import { testId } from '../helpers/server.ts';

// A backup taken from a real server while results stream into it, restored into an empty data
// directory or database, and served again: everything acknowledged before the backup began is
// there, the stored bytes come back byte-equal, and the key and a signed-in session still work.

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-backup-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

const TESTS = 8000;
const BATCH = 10;

interface Target {
  env: Record<string, string>;
  drop(): Promise<void>;
}

async function target(kind: 'embedded' | 'postgresql', name: string): Promise<Target> {
  const dataDir = path.join(scratch, `${kind}-${name}`);
  if (kind === 'embedded') return { env: { PROCTOR_DATA_DIR: dataDir, DATABASE_URL: '' }, drop: async () => undefined };
  const db: TestDatabase = await throwawayDatabase(process.env.DATABASE_URL as string, { prefix: 'proctor_backup', migrated: false });
  return { env: { PROCTOR_DATA_DIR: dataDir, DATABASE_URL: db.url }, drop: () => db.drop() };
}

async function serve(env: Record<string, string>): Promise<{ process: ServerProcess; url: string }> {
  const port = await freePort();
  const started = spawnProctor(['serve'], { ...env, PORT: String(port), PROCTOR_EXECUTOR_CONCURRENCY: '0' });
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url);
  return { process: started, url };
}

async function stop(server: ServerProcess): Promise<void> {
  server.child.kill('SIGTERM');
  await server.exited;
}

async function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const command = spawnProctor(args, env);
  const code = await command.exited;
  return { code, output: command.output() };
}

/** Batches of results from four senders, a batch each every 50 ms or so until stopped, each remembered with when it was acknowledged and how long that took. */
function streamResults(api: ReturnType<typeof client>, runId: number) {
  const acknowledged: { tests: number[]; at: number; took: number }[] = [];
  let next = 1;
  let stopping = false;
  const sender = async () => {
    while (!stopping && next + BATCH <= TESTS) {
      const tests = Array.from({ length: BATCH }, () => next++);
      const began = Date.now();
      const sent = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: tests.map((n) => attempt(testId(n))) });
      if (sent.status === 200) acknowledged.push({ tests, at: Date.now(), took: Date.now() - began });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const senders = Promise.all([sender(), sender(), sender(), sender()]);
  return {
    acknowledged,
    stop: async () => {
      stopping = true;
      await senders;
    },
  };
}

describe.each([
  ['embedded', true],
  ['postgresql', Boolean(process.env.DATABASE_URL)],
] as const)('a backup of the %s database', (kind, runs) => {
  it.runIf(runs)(
    'when it is taken under load and restored into an empty target, then everything acknowledged before it is served again, bytes and sign-ins too',
    async () => {
      const source = await target(kind, 'source');
      const restored = await target(kind, 'restored');
      const archive = path.join(scratch, `${kind}.tar.gz`);
      const original = await serve(source.env);
      let again: Awaited<ReturnType<typeof serve>> | null = null;
      try {
        const key = await printedKey(original.process);
        const signInLink = /\/sign-in\/link\?token=[\w-]+/.exec(original.process.output())?.[0] as string;
        const signedIn = await fetch(`${original.url}${signInLink}`, { redirect: 'manual' });
        const session = (signedIn.headers.get('set-cookie') as string).split(';')[0] as string;
        const api = client(original.url, key);

        const bytes = randomBytes(300_000);
        const resource = (
          await api.post('/api/resources', { project_id: 1, name: 'fixture.bin', mime_type: 'application/octet-stream', size_bytes: bytes.length })
        ).body.data.resource;
        expect((await fetch(resource.upload_url, { method: 'PUT', body: bytes })).status).toBe(200);
        expect((await api.patch(`/api/files/${resource.id}`, { status: 'uploaded' })).status).toBe(200);
        const runId = (await api.post('/api/test-runs/report', { environment: 'local', total_shards: 1 })).body.data.test_run.id;
        const listed = Array.from({ length: TESTS }, (_, i) => listedTest(testId(i + 1), { title: `test ${i + 1}` }));
        expect((await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: listed, complete: true })).status).toBe(200);

        const load = streamResults(api, runId);
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const backupBegan = Date.now();
        const backup = await cli(['backup', '--out', archive], source.env);
        const backupTook = Date.now() - backupBegan;
        await load.stop();
        expect(backup.code, backup.output).toBe(0);
        expect(backup.output).toMatch(/^backed up \d+ rows of \d+ tables and 1 stored files \(300000 bytes\) to /m);
        const before = load.acknowledged.filter((batch) => batch.at < backupBegan).flatMap((batch) => batch.tests);
        const whileItRan = load.acknowledged.filter((batch) => batch.at >= backupBegan && batch.at - batch.took <= backupBegan + backupTook);
        const during = whileItRan.length;
        console.log(
          `backup (${kind}): ${fs.statSync(archive).size} bytes in ${backupTook} ms (the command, from its start); ${before.length} results acknowledged before it began, ${during} batches while it ran, the slowest in ${Math.max(...whileItRan.map((b) => b.took))} ms`,
        );
        expect(before.length).toBeGreaterThan(0);
        expect(during).toBeGreaterThan(0);
        await stop(original.process);

        const restore = await cli(['restore', archive], restored.env);
        expect(restore.code, restore.output).toBe(0);
        expect(restore.output).toMatch(/^restored \d+ rows and 1 stored files \(300000 bytes\) from Proctor \d+\.\d+\.\d+'s backup of /m);
        const refused = await cli(['restore', archive], restored.env);
        expect(refused.code).toBe(1);
        expect(refused.output).toMatch(/^proctor: the (data directory .* is not empty|database of DATABASE_URL has \d+ tables): restore into an empty/m);

        again = await serve(restored.env);
        const restoredApi = client(again.url, key);
        const details = (await restoredApi.get(`/api/test-runs/${runId}`)).body.data.test_run.flattenedSummaryDetails as { title: string; status: string }[];
        const passed = new Set(details.filter((d) => d.status === 'passed').map((d) => d.title));
        expect(before.filter((n) => !passed.has(`test ${n}`))).toEqual([]);
        const files = (await restoredApi.get('/api/files')).body.data.files as { id: number; url: string }[];
        const content = await fetch(files.find((f) => f.id === resource.id)?.url as string);
        expect(Buffer.from(await content.arrayBuffer()).equals(bytes)).toBe(true);
        expect((await fetch(`${again.url}/projects/1/runs`, { headers: { cookie: session }, redirect: 'manual' })).status).toBe(200);
        const newRun = await restoredApi.post('/api/test-runs/report', { environment: 'local', total_shards: 1 });
        expect(newRun.body.data.test_run.id).toBeGreaterThan(runId);
      } finally {
        if (again) await stop(again.process);
        if (original.process.child.exitCode === null) await stop(original.process);
        await source.drop();
        await restored.drop();
      }
    },
  );
});

describe('a backup archive that is not whole, or moves', () => {
  it('when a cut-off archive is restored, then the restore is refused in one line and the target stays empty', async () => {
    const source = path.join(scratch, 'cut-source');
    const original = await serve({ PROCTOR_DATA_DIR: source, DATABASE_URL: '' });
    const archive = path.join(scratch, 'whole.tar.gz');
    try {
      fs.writeFileSync(path.join(scratch, 'cut-key.txt'), await printedKey(original.process));
      expect((await cli(['backup', '--out', archive], { PROCTOR_DATA_DIR: source, DATABASE_URL: '' })).code).toBe(0);
    } finally {
      await stop(original.process);
    }
    const whole = fs.readFileSync(archive);
    const cut = path.join(scratch, 'cut.tar.gz');
    fs.writeFileSync(cut, whole.subarray(0, Math.floor(whole.length * 0.6)));
    const empty = path.join(scratch, 'cut-target');
    const refused = await cli(['restore', cut], { PROCTOR_DATA_DIR: empty, DATABASE_URL: '' });
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/^proctor: .*(cut off|unexpected end of file)/m);
    expect(fs.existsSync(empty) ? fs.readdirSync(empty) : []).toEqual([]);
  });

  it.runIf(Boolean(process.env.DATABASE_URL))(
    'when a backup of the embedded database is restored into PostgreSQL, then a server on it answers with the same key',
    async () => {
      const archive = path.join(scratch, 'whole.tar.gz');
      expect(fs.existsSync(archive)).toBe(true);
      const postgres = await target('postgresql', 'moved');
      let server: Awaited<ReturnType<typeof serve>> | null = null;
      try {
        const restore = await cli(['restore', archive], postgres.env);
        expect(restore.code, restore.output).toBe(0);
        server = await serve(postgres.env);
        const key = /prc_p_[0-9a-f]{12}_[0-9a-f]{48}/.exec(fs.readFileSync(path.join(scratch, 'cut-key.txt'), 'utf8'))?.[0] as string;
        const environments = await client(server.url, key).get('/api/environments');
        expect(environments.status).toBe(200);
        expect(environments.body.data.environments.map((e: { slug: string }) => e.slug)).toContain('local');
      } finally {
        if (server) await stop(server.process);
        await postgres.drop();
      }
    },
  );
});
