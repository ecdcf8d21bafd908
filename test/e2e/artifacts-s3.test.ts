import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.ts';
import { signedQueryString } from '../../server/src/signing.ts';
import { runRetentionPass, serverPolicy } from '../../server/src/retention/index.ts';
import { openStorage } from '../../server/src/storage/open.ts';
import { detailOf, download, expectAttachmentsAsReported, openFailureInBrowser, runArtifactsSuite, type SuiteOutcome } from '../helpers/artifacts.ts';
import { client } from '../helpers/http.ts';
import { startLocalS3, type LocalS3 } from '../helpers/s3.ts';
import { seedEnvironment, seedProject, startTestServer, type TestServer } from '../helpers/server.ts';

// The storage is an S3-compatible server (s3rver) on loopback: the reporter puts bytes straight into
// the bucket by presigned URLs, and downloads redirect there.
let s3: LocalS3;
let server: TestServer;
let api: ReturnType<typeof client>;
let projectId: number;
let suite: SuiteOutcome;

beforeAll(async () => {
  s3 = await startLocalS3();
  server = await startTestServer({ env: s3.env });
  const project = await seedProject(server.sql);
  projectId = project.projectId;
  await seedEnvironment(server.sql, project.projectId, 'local');
  api = client(server.url, project.key);
  suite = await runArtifactsSuite(server.url, project.key);
}, 170_000);

afterAll(async () => {
  await server?.close();
  await s3?.close();
  if (suite) fs.rmSync(suite.dir, { recursive: true, force: true });
});

/** The first answer of a download URL: a redirect into the bucket. */
async function redirectOf(url: string): Promise<string> {
  const response = await fetch(url, { redirect: 'manual' });
  expect(response.status).toBe(302);
  return response.headers.get('location') as string;
}

describe('attachments in an S3-compatible bucket', () => {
  it('when tests fail, then their attachments go straight into the bucket, once per sha256, and download from it equal to what Playwright wrote', async () => {
    expect(suite.exitCode, suite.output).toBe(1);
    expect(await expectAttachmentsAsReported(suite)).toBeGreaterThanOrEqual(8);
    const blobs = await server.sql<{ id: number; sha256: string; storage_key: string }[]>`
      select id, sha256, storage_key from artifact_blobs where project_id = ${projectId} and storage_key is not null`;
    expect(blobs.length).toBeGreaterThanOrEqual(8);
    expect(s3.keys()).toEqual(blobs.map((b) => `artifacts/${projectId}/${b.sha256}-${b.id}`).sort());
    // Nothing went through the server's own disk.
    expect(fs.readdirSync(server.filesDir).filter((name) => /^[0-9a-f]{32}$/.test(name))).toEqual([]);
  });

  it('when an attachment is downloaded, then its signed URL redirects to a presigned URL of the bucket, which serves it with a safe type', async () => {
    const html = detailOf(suite.details, 'attaches an HTML page').attachments.find((a) => a.name === 'report.html');
    const location = await redirectOf((html as { url: string }).url);
    expect(location.startsWith(`${s3.endpoint}/${s3.bucket}/`)).toBe(true);
    expect(location).toContain('X-Amz-Signature=');
    const { headers, bytes } = await download(location);
    expect(headers.get('content-type')).toBe('application/octet-stream');
    expect(headers.get('content-disposition')).toMatch(/^attachment;/);
    expect(bytes.toString()).toContain('<script>');
    const screenshot = detailOf(suite.details, 'fails with a screenshot and a trace').attachments.find((a) => a.name === 'screenshot');
    const shown = await download(await redirectOf((screenshot as { url: string }).url));
    expect(shown.headers.get('content-type')).toBe('image/png');
    expect(shown.headers.get('content-disposition')).toMatch(/^inline;/);
  });

  it('when the run page is opened, then the screenshot and video load from the bucket and the trace viewer opens the trace through the server', async () => {
    const testRun = (await api.get(`/api/test-runs/${suite.runId}`)).body.data.test_run.testRun;
    const page = await fetch(testRun.summary_url);
    expect(page.headers.get('content-security-policy')).toContain(`img-src 'self' ${s3.endpoint}`);
    expect(await openFailureInBrowser(testRun.summary_url, [server.url, s3.endpoint])).toEqual([]);
  });
});

describe('presigned uploads to the bucket', () => {
  const bytes = Buffer.from('a screenshot, uploaded straight into the bucket');
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const declaration = {
    test_id: 'cccccccccccccccccccc-dddddddddddddddddddd',
    retry: 0,
    name: 'screenshot',
    content_type: 'image/png',
    sha256,
    size_bytes: bytes.length,
  };
  const put = (url: string, body: Buffer, headers: Record<string, string>) => fetch(url, { method: 'PUT', body: new Uint8Array(body), headers });
  const confirm = (relative: string) => fetch(new URL(relative, `${server.url}/`), { method: 'POST' });

  it('when bytes are put to the presigned URL and confirmed, then they are checked, stored once, and declared again as stored', async () => {
    const runId = (await api.post('/api/test-runs/report', { environment: 'local', total_shards: 1 })).body.data.test_run.id;
    const [answer] = (await api.post(`/api/test-runs/${runId}/attachments`, { attachments: [declaration] })).body.data.attachments;
    expect(answer).toMatchObject({ status: 'upload', upload_headers: { 'x-amz-checksum-sha256': Buffer.from(sha256, 'hex').toString('base64') } });
    expect(answer.upload_url.startsWith(`${s3.endpoint}/${s3.bucket}/`)).toBe(true);
    expect(answer.confirm_url).toMatch(/^artifacts\/\d+\/confirm\?expires=\d+&signature=/);

    expect((await confirm(answer.confirm_url)).status).toBe(409);
    // s3rver does not check the checksum header as S3 does: the confirmation reads the bytes back.
    const forged = Buffer.from(bytes);
    forged[0] = forged[0]! ^ 1;
    expect((await put(answer.upload_url, forged, answer.upload_headers)).status).toBe(200);
    const refused = await confirm(answer.confirm_url);
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.message).toContain('sha256');
    expect(s3.keys().filter((key) => key.startsWith(`artifacts/${projectId}/${sha256}`))).toEqual([]);

    expect((await put(answer.upload_url, bytes, answer.upload_headers)).status).toBe(200);
    expect((await confirm(answer.confirm_url)).status).toBe(200);
    expect((await confirm(answer.confirm_url)).status).toBe(200);
    const tampered = answer.confirm_url.replace(/signature=[^&]+/, 'signature=AAAA');
    expect((await confirm(tampered)).status).toBe(403);
    const [again] = (await api.post(`/api/test-runs/${runId}/attachments`, { attachments: [{ ...declaration, retry: 1 }] })).body.data.attachments;
    expect(again).toMatchObject({ status: 'stored', upload_url: null, confirm_url: null });
  });
});

describe('files in the bucket', () => {
  it('when a file is created, uploaded to its presigned URL and confirmed, then it downloads from the bucket, and deleting it removes the object', async () => {
    const content = Buffer.from('{"fixture": true}');
    const created = await api.post('/api/resources', {
      project_id: projectId,
      name: 'fixture.json',
      mime_type: 'application/json',
      size_bytes: content.length,
    });
    expect(created.status).toBe(200);
    const { id, upload_url: uploadUrl } = created.body.data.resource;
    expect(uploadUrl.startsWith(`${s3.endpoint}/${s3.bucket}/`)).toBe(true);
    expect((await api.patch(`/api/files/${id}`, { status: 'uploaded' })).status).toBe(409);
    expect((await fetch(uploadUrl, { method: 'PUT', body: new Uint8Array(content) })).status).toBe(200);
    const confirmed = await api.patch(`/api/files/${id}`, { status: 'uploaded' });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.data.file).toMatchObject({ status: 'uploaded', size_bytes: content.length });
    const location = await redirectOf(confirmed.body.data.file.url);
    const downloaded = await download(location);
    expect(downloaded.bytes.equals(content)).toBe(true);
    expect(downloaded.headers.get('content-disposition')).toMatch(/^attachment;/);
    const [row] = await server.sql<{ storage_key: string }[]>`select storage_key from resources where id = ${id}`;
    expect(s3.keys()).toContain(row?.storage_key);
    expect((await api.delete(`/api/resources/${id}`)).status).toBe(200);
    expect(s3.keys()).not.toContain(row?.storage_key);
  });

  it("when a file of no declared size is PUT to the server's own upload URL instead, then the server writes it into the bucket", async () => {
    const content = Buffer.from('through the server, of a size not declared');
    const { id } = (await api.post('/api/resources', { project_id: projectId, name: 'through.txt' })).body.data.resource;
    const query = signedQueryString('test-signing-secret-0123456789', `upload:${id}`, server.clock.now);
    expect((await fetch(`${server.url}/files/${id}/upload?${query}`, { method: 'PUT', body: new Uint8Array(content) })).status).toBe(200);
    const [row] = await server.sql<{ storage_key: string }[]>`select storage_key from resources where id = ${id}`;
    expect(s3.keys()).toContain(row?.storage_key);
    const confirmed = await api.patch(`/api/files/${id}`, { status: 'uploaded' });
    expect(confirmed.body.data.file.status).toBe('uploaded');
    expect((await download(confirmed.body.data.file.url)).bytes.equals(content)).toBe(true);
  });
});

describe('retention in the bucket', () => {
  it("when the runs' attachments expire, then the retention pass removes their objects from the bucket, and every object left is a row's", async () => {
    const suiteKeys = (
      await server.sql<{ storage_key: string }[]>`
      select distinct b.storage_key from artifact_blobs b join test_attachments a on a.blob_id = b.id
      where a.test_run_id = ${suite.runId} and b.storage_key is not null`
    ).map((row) => row.storage_key);
    expect(suiteKeys.length).toBeGreaterThanOrEqual(8);
    expect((await api.put('/api/retention-policy', { results_days: 10, artifacts_days: 1 })).status).toBe(200);
    const config = loadConfig({ ...s3.env, PROCTOR_DATA_DIR: server.filesDir });
    const twoDaysOn = () => new Date(Date.now() + 2 * 86_400_000);
    const [report] = await runRetentionPass(
      { sql: server.sql, storage: await openStorage(config), clock: twoDaysOn, defaults: serverPolicy(config) },
      { projectId },
    );
    expect(report).toMatchObject({ runs: 0, results: 0 });
    expect(report?.files).toBeGreaterThanOrEqual(suiteKeys.length);

    const left = new Set(s3.keys());
    for (const key of suiteKeys) expect(left.has(key), key).toBe(false);
    const rowKeys = (
      await server.sql<{ storage_key: string }[]>`
      select storage_key from artifact_blobs where storage_key is not null union all select storage_key from resources where storage_key is not null`
    ).map((row) => row.storage_key);
    expect([...left].sort()).toEqual(rowKeys.sort());
    const details = (await api.get(`/api/test-runs/${suite.runId}`)).body.data.test_run.flattenedSummaryDetails;
    expect(details.flatMap((detail: { attachments: unknown[] }) => detail.attachments)).toEqual([]);
  });
});

describe('a bucket that does not answer', () => {
  it('when the server starts, then it stops with a line naming PROCTOR_S3_BUCKET', async () => {
    const config = loadConfig({ ...s3.env, PROCTOR_S3_BUCKET: 'no-such-bucket', PROCTOR_DATA_DIR: server.filesDir });
    await expect(openStorage(config)).rejects.toThrow(/^PROCTOR_S3_BUCKET no-such-bucket at http:\/\/127\.0\.0\.1:\d+: 404/);
  });
});
