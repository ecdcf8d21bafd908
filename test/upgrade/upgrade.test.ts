import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { throwawayDatabase } from '../helpers/database.ts';
import { client } from '../helpers/http.ts';
import { ROOT } from '../helpers/playwright.ts';
import { freePort, spawnProctor, waitForHealth } from '../helpers/process.ts';
import { maskReceiverUrl } from '../../server/src/notifications/masking.ts';
import { comparableAnswers, type FixtureSecrets, readBack } from './fixture.ts';

// Every kept release's fixture (test/fixtures/releases/<version>/, made by that release with
// test/upgrade/make-fixture.ts) is started with this version, as an upgrade starts it: on the old
// data directory, or on the old database restored from its dump. The migrations run at start, and
// then the API must answer what it answered on the release that made it (fields added since are
// allowed), the keys and the session still sign in, and the attachments download byte-equal. A
// migration that loses or changes data fails here.

const RELEASES = path.join(ROOT, 'test/fixtures/releases');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-upgrade-'));
fs.chmodSync(scratch, 0o711);
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

interface Expected {
  version: string;
  days: { from: string; to: string };
  answers: Record<string, unknown>;
}

const fixtures = fs
  .readdirSync(RELEASES)
  .flatMap((release) => ['embedded', 'postgresql'].map((kind) => [release, kind] as const))
  .filter(([release, kind]) => fs.existsSync(path.join(RELEASES, release, kind, 'expected.json')));

/**
 * A release's answers as this version gives them on purpose: a destination's URL (an object with a
 * type, a URL and has_secret) shows its scheme and host alone, in the API and the audit trail alike.
 */
function asThisVersionShows(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(asThisVersionShows);
  if (!value || typeof value !== 'object') return value;
  const shown = Object.fromEntries(Object.entries(value).map(([key, item]) => [key, asThisVersionShows(item)])) as Record<string, unknown>;
  if (typeof shown.type === 'string' && typeof shown.url === 'string' && 'has_secret' in shown) shown.url = maskReceiverUrl(shown.type, shown.url).url;
  return shown;
}

const read = <T>(file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as T;

describe('the kept release fixtures', () => {
  it('when the fixtures are listed, then there is one of each database for every release from 0.1.0 on', () => {
    expect(fixtures).toContainEqual(['0.1.0', 'embedded']);
    expect(fixtures).toContainEqual(['0.1.0', 'postgresql']);
  });
});

describe.each(fixtures)('the fixture of release %s on the %s database, started by this version', (release, kind) => {
  const folder = path.join(RELEASES, release, kind);
  it.runIf(kind === 'embedded' || Boolean(process.env.DATABASE_URL))(
    'when it starts on the old data, then everything reads back as that release answered, and keys, sessions and attachments still work',
    async () => {
      const expected = read<Expected>(path.join(folder, 'expected.json'));
      const secrets = read<FixtureSecrets>(path.join(folder, 'secrets.json'));
      const dataDir = path.join(scratch, `${release}-${kind}`);
      fs.mkdirSync(dataDir);
      execFileSync('tar', ['xzf', path.join(folder, 'data.tar.gz'), '-C', dataDir]);
      const db = kind === 'postgresql' ? await throwawayDatabase(process.env.DATABASE_URL as string, { prefix: 'proctor_upgrade', migrated: false }) : null;
      if (db) execFileSync('sh', ['-c', `gunzip -c "${path.join(folder, 'dump.sql.gz')}" | psql -q -v ON_ERROR_STOP=1 "${db.url}" > /dev/null`]);
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const server = spawnProctor(['serve'], {
        PROCTOR_DATA_DIR: dataDir,
        DATABASE_URL: db?.url ?? '',
        PORT: String(port),
        PUBLIC_URL: url,
        PROCTOR_EXECUTOR_CONCURRENCY: '0',
        PROCTOR_DEMO: 'false',
      });
      try {
        await waitForHealth(url);
        const api = client(url, secrets.adminKey);
        const answers = await readBack(url, api, expected.days);
        // The release's answers as it recorded them, its signed links made comparable as today's are.
        expect(answers).toMatchObject(asThisVersionShows(comparableAnswers(expected.answers, '<server>')) as Record<string, unknown>);

        expect((await client(url, secrets.readKey).get('/api/environments')).status).toBe(200);
        expect((await client(url, secrets.readKey).post('/api/environments', { name: 'x', slug: 'x' })).status).toBe(403);
        expect((await fetch(`${url}/projects/1/runs`, { headers: { cookie: secrets.session }, redirect: 'manual' })).status).toBe(200);

        const runs = (answers['/api/test-runs'] as { data: { test_runs: { id: number }[] } }).data.test_runs;
        const attachments = [];
        for (const run of runs) {
          const details = (await api.get(`/api/test-runs/${run.id}`)).body.data.test_run.flattenedSummaryDetails as {
            attachments: { name: string; url: string }[];
          }[];
          attachments.push(...details.flatMap((d) => d.attachments));
        }
        const downloaded = [];
        for (const attachment of attachments) {
          const bytes = Buffer.from(await (await fetch(attachment.url)).arrayBuffer());
          downloaded.push({ name: attachment.name, sha256: createHash('sha256').update(bytes).digest('hex') });
        }
        expect(downloaded).toEqual(secrets.attachments);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
        await db?.drop();
      }
    },
  );
});
