import http from 'node:http';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/http.ts';
import { seedProject, startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let api: ReturnType<typeof client>;
let other: ReturnType<typeof client>;
let projectId: number;
beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProject(server.sql);
  projectId = project.projectId;
  api = client(server.url, project.key);
  other = client(server.url, (await seedProject(server.sql)).key);
});
afterAll(async () => server?.close());

const put = (url: string, body: string) => fetch(url, { method: 'PUT', body });

async function createPending(name = 'report.txt', extra: Record<string, unknown> = {}) {
  const response = await api.post('/api/resources', { project_id: projectId, name, mime_type: 'text/plain', ...extra });
  expect(response.status).toBe(200);
  return response.body.data.resource;
}

describe('uploaded files, end to end over HTTP', () => {
  it('when a file is created, uploaded, confirmed, listed and downloaded, then the bytes and type come back', async () => {
    const content = 'hello, proctor\n';
    const created = await createPending('notes.txt', { size_bytes: Buffer.byteLength(content), description: 'release notes' });
    expect(created).toEqual({
      id: expect.any(Number),
      name: 'notes.txt',
      url: expect.stringContaining(`/files/${created.id}/content?expires=`),
      description: 'release notes',
      mime_type: 'text/plain',
      size_bytes: Buffer.byteLength(content),
      status: 'pending',
      access_level: null,
      created_by: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      upload_url: expect.stringContaining(`/files/${created.id}/upload?expires=`),
    });
    const expires = Number(new URL(created.upload_url).searchParams.get('expires'));
    expect(expires * 1000 - server.clock.now.getTime()).toBeGreaterThan(3_599_000);
    expect(expires * 1000 - server.clock.now.getTime()).toBeLessThanOrEqual(3_600_000);

    const early = await api.patch(`/api/files/${created.id}`, { status: 'uploaded' });
    expect(early.status).toBe(409);

    const upload = await put(created.upload_url, content);
    expect(upload.status).toBe(200);
    expect(await upload.json()).toEqual({ data: { success: true } });

    const confirmed = await api.patch(`/api/files/${created.id}`, { status: 'uploaded' });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.data.file.status).toBe('uploaded');
    expect(confirmed.body.data.file.upload_url).toBeUndefined();

    const files = (await api.get('/api/files')).body.data.files;
    const listed = files.find((f: { id: number }) => f.id === created.id);
    const download = await fetch(listed.url);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toContain('text/plain');
    expect(await download.text()).toBe(content);

    const resources = (await api.get('/api/resources')).body.data.resources;
    expect(resources.map((r: { id: number }) => r.id)).toContain(created.id);
  });

  it('when the signature is tampered with, the resource id changed or the URL expired, then it is refused with 403', async () => {
    const created = await createPending();
    const tampered = new URL(created.upload_url);
    tampered.searchParams.set('signature', `${tampered.searchParams.get('signature')?.slice(0, -2)}xx`);
    expect((await put(tampered.toString(), 'x')).status).toBe(403);
    const extended = new URL(created.upload_url);
    extended.searchParams.set('expires', String(Number(extended.searchParams.get('expires')) + 3600));
    expect((await put(extended.toString(), 'x')).status).toBe(403);
    const otherId = created.upload_url.replace(`/files/${created.id}/`, `/files/${created.id + 1000}/`);
    expect((await put(otherId, 'x')).status).toBe(403);
    const downloadAsUpload = created.url.replace('/content?', '/upload?');
    expect((await put(downloadAsUpload, 'x')).status).toBe(403);

    server.clock.advance(3_600_001);
    const expired = await put(created.upload_url, 'x');
    expect(expired.status).toBe(403);
    expect((await expired.json()).error.message).toContain('expired');
  });

  it('when the uploaded size differs from size_bytes, then it is refused and nothing is stored', async () => {
    const created = await createPending('sized.bin', { size_bytes: 4 });
    expect((await put(created.upload_url, 'abc')).status).toBe(400);
    expect((await put(created.upload_url, 'abcdef')).status).toBe(413);
    expect((await api.patch(`/api/files/${created.id}`, { status: 'uploaded' })).status).toBe(409);
    expect((await put(created.upload_url, 'abcd')).status).toBe(200);
  });

  /** The bytes a confirmed file serves. */
  async function downloaded(id: number): Promise<string> {
    expect((await api.patch(`/api/files/${id}`, { status: 'uploaded' })).status).toBe(200);
    const listed = (await api.get('/api/files?per_page=100')).body.data.files.find((f: { id: number }) => f.id === id);
    const download = await fetch(listed.url);
    expect(download.status).toBe(200);
    return download.text();
  }

  it('when a re-upload fails its size check, then the bytes uploaded before are kept whole', async () => {
    const created = await createPending('kept.bin', { size_bytes: 4 });
    expect((await put(created.upload_url, 'abcd')).status).toBe(200);
    expect((await put(created.upload_url, 'xyz')).status).toBe(400);
    expect(await downloaded(created.id)).toBe('abcd');
  });

  it('when 8 uploads of one file run at once, then the stored file is one of them whole', async () => {
    const created = await createPending('raced.bin');
    const bodies = Array.from({ length: 8 }, (_, i) => String.fromCharCode(97 + i).repeat(256 * 1024));
    const answers = await Promise.all(bodies.map((body) => put(created.upload_url, body)));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(bodies).toContain(await downloaded(created.id));
    expect(fs.readdirSync(server.filesDir).filter((name) => name.endsWith('.partial'))).toEqual([]);
  });

  it('when a body without content-length runs past the limit, then the answer is a 413, not a reset connection, and no partial file stays', async () => {
    const created = await createPending('unbounded.bin', { size_bytes: 1024 });
    const chunks = (async function* () {
      for (let i = 0; i < 64; i++) yield new Uint8Array(16 * 1024).fill(120);
    })();
    const answer = await fetch(created.upload_url, { method: 'PUT', body: chunks as unknown as BodyInit, duplex: 'half' } as RequestInit);
    expect(answer.status).toBe(413);
    expect((await answer.json()).error.message).toContain('larger than 1024 bytes');
    expect(fs.readdirSync(server.filesDir).filter((name) => name.endsWith('.partial'))).toEqual([]);
  });

  it('when a resource is deleted, then the result is data.result.success and the stored bytes are gone', async () => {
    const created = await createPending('gone.txt');
    await put(created.upload_url, 'bytes');
    const before = fs.readdirSync(server.filesDir).length;
    expect((await other.delete(`/api/resources/${created.id}`)).status).toBe(404);
    const response = await api.delete(`/api/resources/${created.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { result: { success: true } } });
    expect(fs.readdirSync(server.filesDir).length).toBe(before - 1);
    expect((await fetch(created.url)).status).toBe(404);
  });

  it('when a file name looks like a path, then it never becomes one', async () => {
    const created = await createPending('../../etc/passwd');
    await put(created.upload_url, 'safe');
    expect(fs.readdirSync(server.filesDir).every((name) => /^[0-9a-f]{32}$/.test(name))).toBe(true);
    const download = await fetch(created.url);
    expect(download.headers.get('content-disposition')).toContain(encodeURIComponent('../../etc/passwd'));
  });
});

describe('link-type files', () => {
  it('when url is given, then the file is uploaded at once with an access level and no upload_url', async () => {
    const response = await api.post('/api/resources', {
      project_id: projectId,
      name: 'Design doc',
      url: 'https://docs.example.com/d/1',
      access_level: 'read_write',
    });
    expect(response.body.data.resource).toMatchObject({ url: 'https://docs.example.com/d/1', status: 'uploaded', access_level: 'read_write' });
    expect(response.body.data.resource.upload_url).toBeUndefined();
    const defaulted = await api.post('/api/resources', { project_id: projectId, name: 'Wiki', url: 'https://wiki.example.com' });
    expect(defaulted.body.data.resource.access_level).toBe('read');
  });
});

describe('validation and scope', () => {
  it.each([
    [{ name: 'a' }, 'body.project_id'],
    [{ project_id: 'PID' }, 'body.name'],
    [{ project_id: 'PID', name: '' }, 'body.name'],
    [{ project_id: 'PID', name: 'a', size_bytes: -1 }, 'body.size_bytes'],
    [{ project_id: 'PID', name: 'a', url: 'ftp://x' }, 'body.url'],
    [{ project_id: 'PID', name: 'a', mime_type: 'not a type' }, 'body.mime_type'],
    [{ project_id: 'PID', name: 'a', access_level: 'read' }, 'body.access_level'],
  ])('when the create body is %j, then the 400 names %s', async (template, field) => {
    const body = JSON.parse(JSON.stringify(template).replace('"PID"', String(projectId)));
    const response = await api.post('/api/resources', body);
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain(field);
  });

  it("when project_id differs from the key's project, then it is refused with 403", async () => {
    const response = await api.post('/api/resources', { project_id: projectId + 1000, name: 'a' });
    expect(response.status).toBe(403);
    expect(response.body.error.message).toContain('body.project_id');
  });

  it('when lists are paged, then per_page defaults to 20, 100 is the most and 101 a 400', async () => {
    const project = await seedProject(server.sql);
    const mine = client(server.url, project.key);
    for (let i = 0; i < 21; i++) await mine.post('/api/resources', { project_id: project.projectId, name: `f${i}` });
    for (const path of ['/api/resources', '/api/files']) {
      const page = await mine.get(path);
      expect(page.body.pagination).toEqual({ page: 1, per_page: 20, total: 21, total_pages: 2 });
      expect((await mine.get(`${path}?per_page=100`)).status).toBe(200);
      const over = await mine.get(`${path}?per_page=101`);
      expect(over.status).toBe(400);
      expect(over.body.error.message).toContain('query.per_page');
      expect((await mine.get(`${path}?page=5`)).body.pagination.page).toBe(5);
    }
  });

  it('when another project patches a file, then it is a 404', async () => {
    const created = await createPending();
    expect((await other.patch(`/api/files/${created.id}`, { name: 'mine now' })).status).toBe(404);
    expect((await api.patch(`/api/files/${created.id}`, { status: 'pending' })).status).toBe(400);
  });
});

describe('downloads that end early', () => {
  /**
   * The stored files this process (which serves the app) holds open. Sockets are left out: an idle
   * keep-alive connection stays open as long as the server keeps it, which says nothing of files.
   */
  const openDescriptors = () =>
    fs.readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(server.filesDir);
      } catch {
        return false;
      }
    }).length;

  async function uploaded(name: string, size: number): Promise<string> {
    const created = await createPending(name, { size_bytes: size });
    expect((await put(created.upload_url, 'x'.repeat(size))).status).toBe(200);
    expect((await api.patch(`/api/files/${created.id}`, { status: 'uploaded' })).status).toBe(200);
    return created.url;
  }

  /** GETs the URL; `abort` cuts the connection after the first bytes, as a closed tab does. */
  function get(url: string, abort: boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      const request = http.get(url, { agent: false }, (response) => {
        response.once('data', () => {
          if (abort) request.destroy();
        });
        response.on('end', resolve);
        response.on('close', resolve);
      });
      request.on('error', (error: NodeJS.ErrnoException) => (abort ? resolve() : reject(error)));
    });
  }

  it('when 2,000 downloads are made and half of them are aborted mid-body, then every file the server opened is closed again', async () => {
    const small = await uploaded('small.bin', 16 * 1024);
    // Larger than loopback's socket buffers: an aborted download leaves most of the file unsent.
    const large = await uploaded('large.bin', 8 * 1024 * 1024);
    await get(small, false);
    const before = openDescriptors();
    for (let batch = 0; batch < 100; batch++) {
      await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? get(large, true) : get(small, false))));
    }
    await expect.poll(openDescriptors, { timeout: 10_000, interval: 200 }).toBeLessThanOrEqual(before);
  }, 120_000);
});
