import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attempt, listedTest } from '../helpers/attempts.ts';
import { client } from '../helpers/http.ts';
import { seedProjectWithEnvironment, startTestServer, testId, type TestServer } from '../helpers/server.ts';

// Whatever a route that writes results is sent, the database never refuses it: a value that
// PostgreSQL would refuse (a timestamp out of its range or offsets, NUL in text, a number past its
// column's type) is refused by validation first, with a 400 naming the field. Refused inside a
// group commit's COPY, it would fail the other batches of the group (test/runs/group-commit.test.ts).

let server: TestServer;
let api: ReturnType<typeof client>;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  const project = await seedProjectWithEnvironment(server.sql, 'ci');
  key = project.key;
  api = client(server.url, key);
});
afterAll(async () => server?.close());

/** A run of one shard, begun with tests 1 and 2. */
async function begunRun(): Promise<number> {
  const runId = (await api.post('/api/test-runs/report', { environment: 'ci', total_shards: 1 })).body.data.test_run.id as number;
  expect((await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listedTest(testId(1)), listedTest(testId(2))], complete: true })).status).toBe(
    200,
  );
  return runId;
}

async function storedCount(runId: number): Promise<number> {
  const [row] = await server.sql<{ n: number }[]>`select count(*)::int as n from test_results where test_run_id = ${runId}`;
  return row?.n ?? 0;
}

const failed = attempt(testId(2), { final: 'unexpected', status: 'failed' });
/** The second attempt of a batch, its final outcome's fields changed. */
const withFinal = (fields: Record<string, unknown>) => ({ ...failed, final: { ...failed.final, ...fields } });

const NUL = 'must not contain the NUL character (\\u0000)';
const OFFSET = 'must have a UTC offset within ±15:59';
const YEARS = 'must be a date in the years 1 to 9999';

/** A batch of two attempts whose second is `second`: the first alone is fine, and is not stored either. */
const RESULT_CASES: [string, string, Record<string, unknown>, string][] = [
  ['started_at', 'the offset +16:00', { ...failed, started_at: '2026-11-28T10:00:00+16:00' }, OFFSET],
  ['started_at', 'the offset -23:59', { ...failed, started_at: '2026-11-28T10:00:00-23:59' }, OFFSET],
  ['started_at', 'the year 0000', { ...failed, started_at: '0000-12-31T23:00:00-02:00' }, YEARS],
  ['started_at', 'the year 10000 in UTC', { ...failed, started_at: '9999-12-31T23:00:00-02:00' }, YEARS],
  ['error_message', 'NUL', { ...failed, error_message: 'Error\u0000' }, NUL],
  ['error_location', 'NUL', { ...failed, error_location: 'a.spec.ts:1\u0000' }, NUL],
  ['stderr_tail', 'NUL', { ...failed, stderr_tail: '\u0000' }, NUL],
  ['final.error_message', 'NUL', withFinal({ error_message: 'boom\u0000' }), NUL],
  ['final.failure_group_id', 'NUL', withFinal({ failure_group_id: 'g\u0000' }), NUL],
  ['final.skip_reason', 'NUL', withFinal({ skip_reason: 'later\u0000' }), NUL],
  ['final.failed_steps.0.title', 'NUL', withFinal({ failed_steps: [{ category: 'hook', title: 'before\u0000' }] }), NUL],
  ['final.failed_steps.0.category', 'NUL', withFinal({ failed_steps: [{ category: '\u0000', title: 'before' }] }), NUL],
  ['final.stack_frames.1', 'NUL', withFinal({ stack_frames: ['a.spec.ts:1:2', 'b.spec.ts\u0000:3:4'] }), NUL],
  ['duration', '2^31 ms', { ...failed, duration: 2 ** 31 }, 'Too big'],
  ['duration', '-1 ms', { ...failed, duration: -1 }, 'Too small'],
  ['retry', '101', { ...failed, retry: 101 }, 'Too big'],
  ['retry', '1.5', { ...failed, retry: 1.5 }, 'expected int'],
  ['final.total_duration', '2^31 ms', withFinal({ total_duration: 2 ** 31 }), 'Too big'],
];

describe('a result batch the database would refuse', () => {
  it.each(RESULT_CASES)(
    'when an attempt has a %s of %s, which the database refuses, then the batch is a 400 naming it and nothing is stored',
    async (field, _what, second, problem) => {
      const runId = await begunRun();
      const response = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: [attempt(testId(1)), second] });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ data: null, error: { message: expect.stringContaining(`body.results.1.${field}: `) } });
      expect(response.body.error.message).toContain(problem);
      expect(await storedCount(runId)).toBe(0);
    },
  );

  it('when the shard is beyond what a run has, then the batch is a 400 naming it', async () => {
    const runId = await begunRun();
    const response = await api.post(`/api/test-runs/${runId}/results`, { shard: 2 ** 31, results: [attempt(testId(1))] });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toMatch(/^body\.shard: Too big/);
  });

  it('when timestamps are at the edges of what the database stores, then they are stored as the instants they name', async () => {
    const runId = await begunRun();
    const edges = ['2026-11-28T10:00:00+15:59', '2026-11-28T10:00:00-15:59', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999999Z'];
    const results = edges.map((startedAt, retry) => attempt(testId(1), { retry, started_at: startedAt, final: retry === edges.length - 1 ? 'flaky' : null }));
    const response = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results });
    expect(response.status).toBe(200);
    // As text: a client's date parsing reads the year 0001 as 2001.
    const rows = await server.sql<{ started_at: string }[]>`
      select to_char(started_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as started_at
      from test_results where test_run_id = ${runId} order by retry`;
    expect(rows.map((row) => row.started_at)).toEqual([
      '2026-11-27T18:01:00.000000',
      '2026-11-29T01:59:00.000000',
      '0001-01-01T00:00:00.000000',
      '9999-12-31T23:59:59.999999',
    ]);
  });
});

describe('the other writes of a run the database would refuse', () => {
  it('when a shard begins at a time beyond the offsets the database takes, then it is a 400 naming started_at', async () => {
    const runId = (await api.post('/api/test-runs/report', { environment: 'ci', total_shards: 1 })).body.data.test_run.id as number;
    const response = await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listedTest(testId(1))], started_at: '2026-11-28T10:00:00+16:00' });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toBe(`body.started_at: ${OFFSET}`);
  });

  it.each([
    ['tags.1', { tags: ['@smoke', '@a\u0000'] }, NUL],
    ['suites.0', { suites: ['cart\u0000'] }, NUL],
    ['runner_project', { runner_project: 'chromium\u0000' }, NUL],
    ['line', { line: 2 ** 31 }, 'Too big'],
    ['column', { column: -1 }, 'Too small'],
  ])('when a listed test has a %s the database refuses, then the begin is a 400 naming it and lists nothing', async (field, fields, problem) => {
    const runId = (await api.post('/api/test-runs/report', { environment: 'ci', total_shards: 1 })).body.data.test_run.id as number;
    const response = await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: [listedTest(testId(1)), { ...listedTest(testId(2)), ...fields }] });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toMatch(new RegExp(`^body\\.tests\\.1\\.${field.replace('.', '\\.')}: `));
    expect(response.body.error.message).toContain(problem);
    const [listed] = await server.sql<{ n: number }[]>`select count(*)::int as n from test_run_tests where test_run_id = ${runId}`;
    expect(listed?.n).toBe(0);
  });

  it("when a shard's end carries an error with NUL, then it is a 400 naming the error and the shard has not ended", async () => {
    const runId = await begunRun();
    const response = await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: 'failed', errors: ['config error', 'at \u0000'] });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toBe(`body.errors.1: ${NUL}`);
    const [shard] = await server.sql<{ status: string | null }[]>`select status from test_run_shards where test_run_id = ${runId}`;
    expect(shard?.status).toBeNull();
  });

  it.each([
    ['name', { name: 'screenshot\u0000.png' }, NUL],
    ['content_type', { content_type: 'image/png; x=\u0000' }, NUL],
    ['retry', { retry: 2 ** 31 }, 'Too big'],
    ['size_bytes', { size_bytes: 2 ** 63 }, ''],
  ])("when an attachment's %s is one the database refuses, then the declaration is a 400 naming it", async (field, fields, problem) => {
    const runId = await begunRun();
    const declared = { test_id: testId(1), retry: 0, name: 'screenshot', content_type: 'image/png', sha256: 'a'.repeat(64), size_bytes: 3, ...fields };
    const response = await api.post(`/api/test-runs/${runId}/attachments`, { attachments: [declared] });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toMatch(new RegExp(`^body\\.attachments\\.0\\.${field}: `));
    expect(response.body.error.message).toContain(problem);
  });
});

describe('a JUnit upload the database would refuse', () => {
  it.each(['0000-06-01T00:00:00Z', '+010000-01-01T00:00:00Z'])(
    'when a testsuite is stamped %s, a time the database cannot store, then the upload is stored with no start time for its tests',
    async (stamp) => {
      const xml = `<testsuites><testsuite name="cart" timestamp="${stamp}"><testcase name="adds" classname="cart" time="0.5"/></testsuite></testsuites>`;
      const form = new FormData();
      form.append('report', new Blob([xml], { type: 'application/xml' }), 'report.xml');
      const response = await fetch(`${server.url}/api/test-runs/junit?environment=ci`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
        body: form,
      });
      expect(response.status).toBe(200);
      const runId = ((await response.json()) as { data: { test_run: { id: number } } }).data.test_run.id;
      const rows = await server.sql<{ started_at: Date | null }[]>`select started_at from test_results where test_run_id = ${runId}`;
      expect(rows).toEqual([{ started_at: null }]);
    },
  );
});
