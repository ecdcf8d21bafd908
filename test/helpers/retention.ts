import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { Sql } from '../../server/src/db.ts';
import type { FinalOutcome } from '../../reporter/src/api/wire.ts';
import { attemptsOf, listedTest } from './attempts.ts';
import type { client } from './http.ts';

type Client = ReturnType<typeof client>;

export interface ReportedTest {
  id: string;
  outcome: FinalOutcome;
  /** Attachments of its last attempt: name and bytes. */
  attachments?: { name: string; bytes: Buffer }[];
}

/** A run reported as the reporter reports one (begin, results, attachments uploaded, end); its id. */
export async function reportRun(api: Client, serverUrl: string, environment: string, tests: ReportedTest[]): Promise<number> {
  const runId = (await api.post('/api/test-runs/report', { environment, total_shards: 1 })).body.data.test_run.id as number;
  await api.post(`/api/test-runs/${runId}/shards/1/begin`, { tests: tests.map((t) => listedTest(t.id, { title: `test ${t.id.slice(-4)}` })), complete: true });
  const recorded = await api.post(`/api/test-runs/${runId}/results`, { shard: 1, results: tests.flatMap((t) => attemptsOf(t.id, t.outcome)) });
  if (recorded.status !== 200) throw new Error(`results: ${recorded.text}`);
  for (const test of tests) {
    for (const attachment of test.attachments ?? []) await uploadAttachment(api, serverUrl, runId, test, attachment);
  }
  const failed = tests.some((t) => t.outcome === 'unexpected');
  await api.post(`/api/test-runs/${runId}/shards/1/end`, { status: failed ? 'failed' : 'passed' });
  return runId;
}

async function uploadAttachment(api: Client, serverUrl: string, runId: number, test: ReportedTest, attachment: { name: string; bytes: Buffer }): Promise<void> {
  const retry = test.outcome === 'unexpected' || test.outcome === 'flaky' ? 1 : 0;
  const declaration = {
    test_id: test.id,
    retry,
    name: attachment.name,
    content_type: 'text/plain',
    sha256: createHash('sha256').update(attachment.bytes).digest('hex'),
    size_bytes: attachment.bytes.length,
  };
  const declared = await api.post(`/api/test-runs/${runId}/attachments`, { attachments: [declaration] });
  const answer = declared.body.data.attachments[0] as { status: string; upload_url: string | null };
  if (answer.status !== 'upload') return;
  const url = new URL(answer.upload_url as string, `${serverUrl}/`).toString();
  const put = await fetch(url, { method: 'PUT', body: new Uint8Array(attachment.bytes), headers: { 'content-type': 'application/octet-stream' } });
  if (put.status !== 200) throw new Error(`upload: ${put.status}`);
}

/**
 * What the rows and the files under `filesDir` say of each other: files that no blob row leads to,
 * and blob rows whose bytes are not there. Both empty once no pass is under way.
 */
export async function storageAgreement(sql: Sql, filesDir: string): Promise<{ orphanFiles: string[]; missingFiles: string[]; queued: number }> {
  const files = new Set(fs.readdirSync(filesDir).filter((name) => /^[0-9a-f]{32}$/.test(name)));
  const keys = (await sql<{ storage_key: string }[]>`select storage_key from artifact_blobs where storage_key is not null`).map((row) => row.storage_key);
  const [queued] = await sql<{ n: number }[]>`select count(*)::int as n from storage_removals`;
  return {
    orphanFiles: [...files].filter((file) => !keys.includes(file)),
    missingFiles: keys.filter((key) => !files.has(key)),
    queued: queued?.n ?? 0,
  };
}
