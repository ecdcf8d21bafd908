import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detailOf, download, expectAttachmentsAsReported, openFailureInBrowser, runArtifactsSuite, type SuiteOutcome } from '../helpers/artifacts.ts';
import { client } from '../helpers/http.ts';
import { trigger, waitForRun } from '../helpers/runs.ts';
import { createKey } from '../../server/src/auth/store.ts';
import { createProject } from '../../server/src/projects/store.ts';
import { seedEnvironment, seedProject, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let api: ReturnType<typeof client>;
let suite: SuiteOutcome;

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProject(server.sql);
  await seedEnvironment(server.sql, project.projectId, 'local');
  api = client(server.url, project.key);
  suite = await runArtifactsSuite(server.url, project.key);
}, 170_000);

afterAll(async () => {
  await server?.close();
  if (suite) fs.rmSync(suite.dir, { recursive: true, force: true });
});

const detail = (title: string) => detailOf(suite.details, title);

describe('attachments of real Playwright attempts', () => {
  it('when tests fail, then every attachment of their attempts is listed with its size and downloads equal to what Playwright wrote', async () => {
    expect(suite.exitCode, suite.output).toBe(1);
    expect(await expectAttachmentsAsReported(suite)).toBeGreaterThanOrEqual(8);
  });

  it('when a test passes, then none of its attempts uploads anything (artifacts: failures)', () => {
    expect(detail('passes').attachments).toEqual([]);
  });

  it('when an attachment is HTML, then it downloads as an attachment with a safe type, nosniff and a sandbox policy, never as text/html', async () => {
    const html = detail('attaches an HTML page').attachments.find((a) => a.name === 'report.html');
    expect(html?.content_type).toBe('text/html');
    const { headers } = await download((html as { url: string }).url);
    expect(headers.get('content-type')).toBe('application/octet-stream');
    expect(headers.get('content-disposition')).toMatch(/^attachment;/);
    expect(headers.get('x-content-type-options')).toBe('nosniff');
    expect(headers.get('content-security-policy')).toContain('sandbox');
    const screenshot = detail('fails with a screenshot and a trace').attachments.find((a) => a.name === 'screenshot');
    const shown = await download((screenshot as { url: string }).url);
    expect(shown.headers.get('content-type')).toBe('image/png');
    expect(shown.headers.get('content-disposition')).toMatch(/^inline;/);
  });

  it('when two tests attach the same bytes, then the project stores them once', async () => {
    const sha = createHash('sha256').update('the same bytes, attached by two tests').digest('hex');
    const [row] = await server.sql<{ n: number }[]>`select count(*)::int as n from artifact_blobs where sha256 = ${sha}`;
    expect(row?.n).toBe(1);
    const [uses] = await server.sql<{ n: number }[]>`
      select count(*)::int as n from test_attachments a join artifact_blobs b on b.id = a.blob_id where b.sha256 = ${sha}`;
    expect(uses?.n).toBe(4);
    expect(
      detail('attaches shared bytes')
        .attachments.filter((a) => a.name === 'shared.txt')
        .map((a) => a.retry),
    ).toEqual([0, 1]);
  });

  it('when an attachment is over the limit, then it is refused in the summary line and the test outcome is unchanged', () => {
    expect(suite.output).toMatch(/\[proctor\] \d+ attachment\(s\) uploaded .*refused: big\.bin of .*over the limit of 1\.0 MB \(PROCTOR_ARTIFACT_LIMIT_MB\)/);
    const tooMuch = detail('attaches too much');
    expect(tooMuch.status).toBe('failed');
    expect(tooMuch.attachments.map((a) => a.name)).not.toContain('big.bin');
    expect(tooMuch.attachments.map((a) => a.name)).toContain('trace');
  });

  it('when a signed URL is altered, then it is refused with 403', async () => {
    const [first] = detail('fails with a screenshot and a trace').attachments;
    const tampered = (first as { url: string }).url.replace(/signature=[^&]+/, 'signature=AAAA');
    expect((await download(tampered)).status).toBe(403);
  });
});

describe('the run page and the trace viewer, in Chromium', () => {
  it('when a failure is opened, then its screenshot and video show, and "Open trace" opens the trace viewer on its actions, with nothing from outside', async () => {
    const testRun = (await api.get(`/api/test-runs/${suite.runId}`)).body.data.test_run.testRun;
    expect(await openFailureInBrowser(testRun.summary_url, [server.url])).toEqual([]);
  });
});

describe('the attachments API', () => {
  const bytes = Buffer.from('bytes of a screenshot, as far as this test knows');
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const declaration = (fields: Record<string, unknown> = {}) => ({
    test_id: 'aaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbbbbbb',
    retry: 0,
    name: 'screenshot',
    content_type: 'image/png',
    sha256,
    size_bytes: bytes.length,
    ...fields,
  });
  let runId: number;

  beforeAll(async () => {
    runId = (await api.post('/api/test-runs/report', { environment: 'local', total_shards: 1 })).body.data.test_run.id;
  });

  const put = (url: string, body: Buffer) => fetch(url, { method: 'PUT', body: new Uint8Array(body), headers: { 'content-type': 'application/octet-stream' } });

  it('when a declaration is malformed, then the answer is a 400 naming the field, and nothing is recorded', async () => {
    const before = await server.sql<{ n: number }[]>`select count(*)::int as n from test_attachments where test_run_id = ${runId}`;
    const response = await api.post(`/api/test-runs/${runId}/attachments`, { attachments: [declaration(), declaration({ sha256: 'ABC' })] });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain('body.attachments.1.sha256');
    const after = await server.sql<{ n: number }[]>`select count(*)::int as n from test_attachments where test_run_id = ${runId}`;
    expect(after[0]?.n).toBe(before[0]?.n);
    expect((await api.post('/api/test-runs/999999/attachments', { attachments: [declaration()] })).status).toBe(404);
  });

  it('when bytes do not hash to the declared sha256, then the upload is refused with 400 and a correct one is then stored', async () => {
    const declared = await api.post(`/api/test-runs/${runId}/attachments`, { attachments: [declaration()] });
    expect(declared.body.data.attachments[0]).toMatchObject({ status: 'upload', reason: null });
    const url = new URL(declared.body.data.attachments[0].upload_url as string, `${server.url}/`).toString();
    const forged = Buffer.from(bytes);
    forged[0] = forged[0]! ^ 1;
    const refused = await put(url, forged);
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.message).toContain('sha256');
    expect((await put(url, Buffer.concat([bytes, Buffer.from('x')]))).status).toBe(413);
    expect((await put(url, bytes)).status).toBe(200);
    // Idempotent: a retried upload of stored bytes is answered as stored.
    expect((await put(url, bytes)).status).toBe(200);
    const again = await api.post(`/api/test-runs/${runId}/attachments`, { attachments: [declaration({ retry: 1 })] });
    expect(again.body.data.attachments[0]).toMatchObject({ status: 'stored', upload_url: null });
    const files = fs.readdirSync(server.filesDir).filter((name) => /^[0-9a-f]{32}$/.test(name));
    const stored = files.filter((name) => fs.readFileSync(path.join(server.filesDir, name)).equals(bytes));
    expect(stored).toHaveLength(1);
  });

  it('when a declaration is over the server limit, then that one is refused and the others of its batch are not', async () => {
    const big = declaration({ sha256: 'f'.repeat(64), size_bytes: 101 * 1024 * 1024, name: 'video' });
    const answer = await api.post(`/api/test-runs/${runId}/attachments`, { attachments: [big, declaration({ retry: 2 })] });
    expect(answer.status).toBe(200);
    expect(answer.body.data.attachments[0]).toMatchObject({ status: 'refused', reason: expect.stringContaining("server's limit") });
    expect(answer.body.data.attachments[1]).toMatchObject({ status: 'stored' });
  });
});

describe('a run the executor runs', () => {
  it('when its tests fail, then their attachments, videos among them, are uploaded the same way', async () => {
    const executing = await startTestServer({ executor: true, clock: new TestClock('live') });
    try {
      // The suite's own folder, run in place by the runner user: readable by others, as a checkout is.
      fs.chmodSync(suite.dir, 0o755);
      const project = await createProject(executing.sql, { name: 'artifacts', repoUrl: suite.dir, repoName: 'acme/artifacts' });
      await seedEnvironment(executing.sql, project.id, 'exec');
      const executed = client(executing.url, await createKey(executing.sql, { projectId: project.id }));
      const run = await waitForRun(executed, await trigger(executed, { environment: 'exec', test_case_ids: [] }));
      expect(run.testRun, JSON.stringify(run.testRun)).toMatchObject({ state: 'failed', error_reason: null });
      const failing = run.flattenedSummaryDetails.find((d: { title: string }) => d.title === 'fails with a screenshot and a trace');
      const screenshot = failing.attachments.find((a: { name: string }) => a.name === 'screenshot');
      const downloaded = await download(screenshot.url);
      expect(downloaded.bytes.subarray(1, 4).toString()).toBe('PNG');
      expect(downloaded.bytes.length).toBe(screenshot.size_bytes);
      // The runner's Playwright found Debian's ffmpeg, linked where it looks for its own build.
      expect(failing.attachments.map((a: { name: string }) => a.name)).toEqual(expect.arrayContaining(['trace', 'video']));
    } finally {
      await executing.close();
    }
  });
});
