// Timing GET requests over HTTP, and the analytics endpoints that bench/analytics and bench/scale time.
import { median, percentile } from './lib.ts';

export interface Timed {
  median: number;
  p95: number;
  p99: number;
  bytes: number;
}

/** `requests` timed round trips on loopback after `warm` untimed ones (the first warm the query plans and the code). */
export async function timeGet(url: string, path: string, headers: Record<string, string>, requests: number, warm = 3): Promise<Timed> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < warm + requests; i++) {
    const started = performance.now();
    const response = await fetch(`${url}${path}`, { headers, redirect: 'manual' });
    const body = await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${Buffer.from(body).toString().slice(0, 200)}`);
    if (i >= warm) times.push(performance.now() - started);
    bytes = body.byteLength;
  }
  return { median: median(times), p95: percentile(times, 95), p99: percentile(times, 99), bytes };
}

/** Every analytics endpoint at 7 and 90 days, one test case's history, and the flaky tests three ways. */
export function analyticsEndpoints(environmentId: number): [string, string][] {
  const singleCase = `${'0'.repeat(17)}${(1234).toString(16)}-${'0'.repeat(19)}2`;
  return [
    ['test-runs days=7', '/api/v1/analytics/test-runs?days=7'],
    ['test-runs days=90', '/api/v1/analytics/test-runs?days=90'],
    ['test-counts days=7', '/api/v1/analytics/test-counts?days=7'],
    ['test-counts days=90', '/api/v1/analytics/test-counts?days=90'],
    ['test-cases days=7', '/api/v1/analytics/test-cases?days=7&order_by=fail_rate'],
    ['test-cases days=90', '/api/v1/analytics/test-cases?days=90&order_by=fail_rate'],
    ['single-case history days=90', `/api/v1/analytics/test-cases?days=90&test_case_id=${singleCase}&limit_history=100`],
    ['flaky-tests (14 days, every environment)', '/api/flaky-tests?per_page=50'],
    ['flaky-tests (14 days, one environment)', `/api/flaky-tests?environment_id=${environmentId}&per_page=50`],
    ['flaky-tests class=broken', `/api/flaky-tests?environment_id=${environmentId}&class=broken`],
  ];
}
