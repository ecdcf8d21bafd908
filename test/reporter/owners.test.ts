import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import type { ShardBeginBody } from '../../reporter/src/api/wire.ts';
import { annotatedOwners, readCodeowners, repositoryRoot } from '../../reporter/src/reporter/owners.ts';
import { resolveSettings } from '../../reporter/src/reporter/settings.ts';
import { Uploader } from '../../reporter/src/reporter/uploader.ts';
import { listedTest } from '../helpers/attempts.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** A repository folder (`.git` as a worktree has it: a file) with the given files. */
function repository(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-owners-'));
  dirs.push(dir);
  fs.writeFileSync(path.join(dir, '.git'), 'gitdir: /elsewhere\n');
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

describe('where the reporter finds CODEOWNERS', () => {
  it('when the config is in a folder of the repository, then the root is the folder above that holds .git', () => {
    const dir = repository({ 'e2e/playwright.config.ts': '' });
    expect(repositoryRoot(path.join(dir, 'e2e'))).toBe(dir);
  });

  it('when several places hold a CODEOWNERS file, then GitHub’s order decides: .github/, the root, docs/, then .gitlab/', () => {
    const all = repository({
      '.github/CODEOWNERS': '* @github-folder',
      CODEOWNERS: '* @root',
      'docs/CODEOWNERS': '* @docs',
      '.gitlab/CODEOWNERS': '* @gitlab',
    });
    expect(readCodeowners(all)?.file).toBe('.github/CODEOWNERS');
    expect(readCodeowners(repository({ CODEOWNERS: '* @root', 'docs/CODEOWNERS': '* @docs' }))?.file).toBe('CODEOWNERS');
    const gitlab = readCodeowners(repository({ '.gitlab/CODEOWNERS': '* @gitlab\n/tests/ @qa' }));
    expect(gitlab?.file).toBe('.gitlab/CODEOWNERS');
    expect(gitlab?.codeowners.dialect).toBe('gitlab');
    expect(readCodeowners(repository({}))).toBeNull();
  });

  it('when owner annotations name several owners, then each is one owner, in order', () => {
    const annotations = [
      { type: 'owner', description: '@acme/payments, @bob' },
      { type: 'issue', description: 'https://example.com/1' },
      { type: 'owner', description: 'carol@example.com' },
      { type: 'owner' },
    ];
    expect(annotatedOwners({ annotations })).toEqual(['@acme/payments', '@bob', 'carol@example.com']);
  });
});

describe('a server that does not know owners', () => {
  it('when begin is refused for the owners field, then the list goes again without it and the run is reported', async () => {
    const begins: ShardBeginBody[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', () => {
        const body = JSON.parse(gunzipSync(Buffer.concat(chunks)).toString());
        res.setHeader('content-type', 'application/json');
        if (req.url?.endsWith('/begin')) {
          begins.push(body);
          // What a server before 0.3.0 (zod's strict objects) answers.
          if (body.tests.some((test: { owners?: string[] }) => test.owners)) {
            res.statusCode = 400;
            return res.end(JSON.stringify({ data: null, error: { message: 'body.tests.0: Unrecognized key: "owners"' } }));
          }
        }
        res.end(JSON.stringify({ data: { success: true, state: 'passed', summary_url: 'http://proctor.test/runs/5' } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const resolved = resolveSettings({ url, apiKey: 'k', maxAttempts: 1 }, { PROCTOR_RUN_ID: '5', PROCTOR_COMMIT: 'abc', PROCTOR_BRANCH: 'main' });
      if (!resolved.ok) throw new Error(resolved.reason);
      const uploader = new Uploader(resolved.settings);
      const tests = [listedTest('a'.repeat(41), { owners: ['@acme/qa'] }), listedTest('b'.repeat(41))];
      uploader.start({ projectDir: '.', tests, complete: true, shard: 1, totalShards: 1, startedAt: new Date() });
      const report = await uploader.finish('passed', []);
      expect(report.failures).toEqual([]);
      expect(report.state).toBe('passed');
      expect(begins.map((begin) => begin.tests.map((test) => test.owners ?? null))).toEqual([
        [['@acme/qa'], null],
        [null, null],
      ]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
