// Lighthouse on every page of the dashboard, as bench/dashboard's second half: the built server
// (`npm start`'s) on a fresh embedded data directory seeds its demo project, its executor runs the
// sample suite twice, and Debian's Chromium loads each page signed in (the session's cookie as an
// extra header) on a phone and on a laptop. Target: performance, accessibility and best practices
// each at least 95 on every page in both form factors.
//
// Throttling is 'devtools' (the browser itself slows its network to Lighthouse's 4G figures and,
// on the phone, its CPU 4 times), not the default 'simulate' (BENCH_LIGHTHOUSE_THROTTLING chooses):
// simulate estimates the page's times from the tasks it saw, and on this shared 2-core machine a
// task waiting for a core counts as the page's own work times four: at load average 30 it scored
// the run page 28 on a phone (total blocking time 5 s). devtools measures what the throttled
// browser does. Reports: test-results/lighthouse/ (CI keeps test-results/).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import lighthouse from 'lighthouse';
import desktopConfig from 'lighthouse/core/config/desktop-config.js';
import { client } from '../test/helpers/http.ts';
import { printed, runToEnd } from '../test/helpers/demo.ts';
import { freePort, serverProcess, waitForHealth } from '../test/helpers/process.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const TARGET = 95;
const THROTTLING = (process.env.BENCH_LIGHTHOUSE_THROTTLING ?? 'devtools') as 'devtools' | 'simulate' | 'provided';
const CATEGORIES = ['performance', 'accessibility', 'best-practices'] as const;
// Each page's whole report, kept with CI's artifacts (test-results/).
const REPORTS = path.join(ROOT, 'test-results', 'lighthouse');
const FORM_FACTORS = (process.env.BENCH_LIGHTHOUSE_FORM_FACTORS ?? 'mobile,desktop').split(',') as ('mobile' | 'desktop')[];

interface Scores {
  page: string;
  formFactor: string;
  scores: Record<(typeof CATEGORIES)[number], number>;
  failing: string[];
}

/** One page's scores, with the audits that cost points in a category under target. */
async function audit(port: number, url: string, cookie: string | null, formFactor: 'mobile' | 'desktop', report: string): Promise<Omit<Scores, 'page'>> {
  const flags = {
    port,
    output: 'json' as const,
    logLevel: 'error' as const,
    onlyCategories: [...CATEGORIES],
    throttlingMethod: THROTTLING,
    extraHeaders: cookie ? { cookie } : null,
    disableStorageReset: false,
  };
  const result = await lighthouse(url, flags, formFactor === 'desktop' ? desktopConfig : undefined);
  if (!result) throw new Error(`Lighthouse gave no result for ${url}`);
  const { lhr } = result;
  fs.writeFileSync(report, typeof result.report === 'string' ? result.report : JSON.stringify(lhr));
  if (lhr.runtimeError) throw new Error(`Lighthouse on ${url}: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
  const scores = Object.fromEntries(CATEGORIES.map((c) => [c, Math.round((lhr.categories[c]?.score ?? 0) * 100)])) as Scores['scores'];
  const failing: string[] = [];
  for (const c of CATEGORIES) {
    if (scores[c] >= TARGET) continue;
    for (const ref of lhr.categories[c]?.auditRefs ?? []) {
      const a = lhr.audits[ref.id];
      if (ref.weight > 0 && a && a.score !== null && a.score < 1) failing.push(`${c}: ${a.id} (${a.score})${a.displayValue ? ` ${a.displayValue}` : ''}`);
    }
  }
  return { formFactor, scores, failing };
}

export async function benchLighthouse(): Promise<boolean> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proctor-lighthouse-'));
  fs.chmodSync(dataDir, 0o711);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // The built server, as `npm start` runs it (no response checking, compiled code).
  const server = serverProcess(
    spawn(process.execPath, [path.join(ROOT, 'server/dist/bin.js'), 'serve'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: '', PROCTOR_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: url, LOG_LEVEL: 'warn' },
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  // Debian's Chromium with a debugging port for Lighthouse to drive, unsandboxed as Playwright runs it
  // (CI runs as root); Playwright's own launch keeps
  // the browser to itself: the targets Lighthouse opens in it are closed under it).
  const browser = serverProcess(
    spawn(
      '/usr/bin/chromium',
      [
        '--headless=new',
        '--no-sandbox',
        '--remote-debugging-port=0',
        '--no-first-run',
        '--no-default-browser-check',
        `--user-data-dir=${path.join(dataDir, 'chromium')}`,
        'about:blank',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    ),
  );
  let met = true;
  try {
    await waitForHealth(url, 180_000);
    const debuggingPort = Number((await printed(browser.output, /DevTools listening on ws:\/\/[^:]+:\d+/, 90_000)).split(':').at(-1));
    const version = (await (await fetch(`http://127.0.0.1:${debuggingPort}/json/version`)).json()) as { Browser: string };
    const key = await printed(server.output, /prc_p_[0-9a-f]{12}_[0-9a-f]{48}/, 90_000);
    const signIn = await printed(server.output, /\/sign-in\/link\?token=\S+/, 90_000);
    const api = client(url, key);
    const projectId = (await api.get('/api/environments')).body.data.environments[0].project_id as number;
    const first = await runToEnd(api, 'local');
    const second = await runToEnd(api, 'local');
    const details = (await api.get(`/api/test-runs/${second}`)).body.data.test_run.flattenedSummaryDetails as {
      status: string;
      test_case_id: string;
      failure_group_id: string | null;
    }[];
    const failed = details.find((d) => d.status === 'failed' && d.failure_group_id);
    if (!failed) throw new Error(`the demo's run #${second} has no failure in a group`);
    const signedIn = await fetch(`${url}${signIn}`, { redirect: 'manual' });
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    if (!cookie) throw new Error(`the demo's sign-in link answered ${signedIn.status} with no cookie`);
    const base = `/projects/${projectId}`;
    const pages: [string, string, boolean][] = [
      ['projects', '/', true],
      ['runs', `${base}/runs`, true],
      ['run', `${base}/runs/${second}`, true],
      ['visual review', `${base}/runs/${second}/visual`, true],
      ['compare, choosing', `${base}/runs/${second}/compare`, true],
      ['compare', `${base}/runs/${second}/compare/${first}`, true],
      ['tests', `${base}/tests`, true],
      ['a test', `${base}/tests/${encodeURIComponent(failed.test_case_id)}`, true],
      ['failure groups', `${base}/failure-groups`, true],
      ['a failure group', `${base}/failure-groups/${encodeURIComponent(failed.failure_group_id as string)}`, true],
      ['flaky tests', `${base}/flaky-tests`, true],
      ['snoozes', `${base}/snoozes`, true],
      ['analytics', `${base}/analytics`, true],
      ['environments', `${base}/environments`, true],
      ['digest', `${base}/digest?period=week`, true],
      ['search', `${base}/search?q=${encodeURIComponent('checkout')}`, true],
      ['members', `${base}/members`, true],
      ['keys', `${base}/keys`, true],
      ['audit', `${base}/audit`, true],
      ['settings', `${base}/settings`, true],
      // Not the error pages: Lighthouse refuses to score a document answered 404
      // (ERRORED_DOCUMENT_REQUEST); test/e2e/dashboard-screens.test.ts checks the not-found page's
      // layout and accessibility.
      ['sign-in', '/sign-in', false],
    ];
    fs.mkdirSync(REPORTS, { recursive: true });
    const only = process.env.BENCH_LIGHTHOUSE_PAGES?.split(',');
    const results: Scores[] = [];
    console.log(
      `bench/dashboard (Lighthouse ${(await import('lighthouse/package.json', { with: { type: 'json' } })).default.version}, ${version.Browser}, ${THROTTLING} throttling; load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')})`,
    );
    console.log(`  ${'page'.padEnd(26)} ${'form'.padEnd(8)} perf  a11y  best   target ${TARGET}`);
    for (const [name, target, withCookie] of pages) {
      if (only && !only.includes(name)) continue;
      for (const formFactor of FORM_FACTORS) {
        const scored = {
          page: name,
          ...(await audit(
            debuggingPort,
            `${url}${target}`,
            withCookie ? cookie : null,
            formFactor,
            path.join(REPORTS, `${name.replace(/\W+/g, '-')}-${formFactor}.json`),
          )),
        };
        results.push(scored);
        const ok = CATEGORIES.every((c) => scored.scores[c] >= TARGET);
        if (!ok) met = false;
        console.log(
          `  ${name.padEnd(26)} ${formFactor.padEnd(8)} ${CATEGORIES.map((c) => String(scored.scores[c]).padStart(4)).join('  ')}   ${ok ? 'met' : 'NOT met'}`,
        );
        for (const line of scored.failing) console.log(`      ${line}`);
      }
    }
    console.log(
      `  target: performance, accessibility and best practices each at least ${TARGET} on every page, ${FORM_FACTORS.join(' and ')}: ${met ? 'met' : 'NOT met'} (load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')})`,
    );
  } finally {
    browser.child.kill('SIGTERM');
    await browser.exited;
    server.child.kill('SIGTERM');
    await server.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return met;
}

if (import.meta.filename === process.argv[1] || process.argv[1]?.endsWith('bench/lighthouse.ts')) {
  // A miss is printed as the other benches print theirs: NOT met, a finding.
  await benchLighthouse();
}
