import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.ts';
import { openStorage } from '../../server/src/storage/open.ts';
import { client } from '../helpers/http.ts';
import { serveNode } from '../helpers/process.ts';
import { printedKey } from '../helpers/release.ts';
import { startLocalS3 } from '../helpers/s3.ts';

// The folders of stored bytes (`files/`, and `spool/` in front of a bucket) are the server's
// user's alone: the data directory is traversable by the user that runs suites.

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-folders-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

describe('the folders of stored bytes', () => {
  it("when the server starts on a data directory whose files/ an earlier version left 0755, then it is 0700, and an uploaded file in it is the server's alone", async () => {
    const dataDir = path.join(scratch, 'served');
    fs.mkdirSync(path.join(dataDir, 'files'), { recursive: true, mode: 0o755 });
    fs.chmodSync(path.join(dataDir, 'files'), 0o755);
    const server = await serveNode({ DATABASE_URL: '', PROCTOR_DATA_DIR: dataDir, PROCTOR_EXECUTOR_CONCURRENCY: '0' });
    try {
      const api = client(server.url, await printedKey(server));
      const bytes = randomBytes(1000);
      const resource = (await api.post('/api/resources', { project_id: 1, name: 'a.bin', mime_type: 'application/octet-stream', size_bytes: bytes.length }))
        .body.data.resource;
      expect((await fetch(resource.upload_url, { method: 'PUT', body: bytes })).status).toBe(200);
      const files = path.join(dataDir, 'files');
      expect(modeOf(files).toString(8)).toBe('700');
      const stored = fs.readdirSync(files);
      expect(stored).toHaveLength(1);
      expect(modeOf(path.join(files, stored[0] as string)).toString(8)).toBe('600');
      expect(modeOf(dataDir).toString(8)).toBe('711');
    } finally {
      await server.stop();
    }
  });

  it('when the storage is opened on a data directory that does not exist yet, then every folder it makes is 0700', async () => {
    const dataDir = path.join(scratch, 'new', 'data');
    await openStorage(loadConfig({ PROCTOR_DATA_DIR: dataDir, PROCTOR_SIGNING_SECRET: 'x'.repeat(20) }));
    expect(modeOf(path.join(dataDir, 'files')).toString(8)).toBe('700');
    expect(modeOf(dataDir).toString(8)).toBe('700');
    expect(modeOf(path.join(scratch, 'new')).toString(8)).toBe('700');
  });

  it('when the storage is a bucket, then spool/, where uploads wait for it, is 0700 too, even if it was 0755', async () => {
    const s3 = await startLocalS3();
    try {
      const dataDir = path.join(scratch, 'bucket');
      fs.mkdirSync(path.join(dataDir, 'spool'), { recursive: true });
      fs.chmodSync(path.join(dataDir, 'spool'), 0o755);
      await openStorage(loadConfig({ PROCTOR_DATA_DIR: dataDir, PROCTOR_SIGNING_SECRET: 'x'.repeat(20), ...s3.env }));
      expect(modeOf(path.join(dataDir, 'spool')).toString(8)).toBe('700');
      expect(fs.existsSync(path.join(dataDir, 'files'))).toBe(false);
    } finally {
      await s3.close();
    }
  });
});
