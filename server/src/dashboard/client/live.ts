import { api } from './api.ts';
// Types only: the script's bundle takes nothing of the server's code (esbuild drops these imports).
import type { LiveResult as StoredResult, LiveRunRow } from '../../runs/index.ts';
import { labelCells } from './cards.ts';

// A run under way and a list of runs under way, kept fresh in place (issue 55, point 3): each page
// holds one server-sent event stream, which EventSource resumes after a disconnect with the last
// event's id; text is set through the DOM (textContent), never as HTML. A browser without
// EventSource polls the API every 2 s and reloads when something changed.

const POLL_MS = 2000;

/** Polls `url` until the fingerprint of its answer differs from what is shown, then reloads the page. */
function watch(url: string, fingerprint: (body: any) => string, shown: string | null): void {
  const poll = async () => {
    try {
      const response = await api('GET', url);
      if (response.ok && fingerprint(await response.json()) !== shown) {
        location.reload();
        return;
      }
    } catch {
      // The next poll tries again.
    }
    setTimeout(poll, POLL_MS);
  };
  setTimeout(poll, POLL_MS);
}

/** A result as the run's stream sends it (its transaction's id left out). */
type LiveResult = Omit<StoredResult, 'xid'>;

interface LiveProgress {
  state: string;
  total: number;
  done: number;
  passed: number;
  failed: number;
  flaky: number;
  skipped: number;
  snoozed: number;
  time_left_ms: number | null;
}

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className: string | null, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** As the server writes a duration (runs/page.tsx formatDuration). */
export function formatDuration(ms: number | null): string {
  if (ms === null) return '–';
  if (ms < 1000) return `${ms} ms`;
  const seconds = ms / 1000;
  return seconds < 60 ? `${seconds.toFixed(1)} s` : `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

/** The progress line: tests done of total, failures so far, the time left. */
export function progressLine(p: LiveProgress): string {
  const parts = [`${p.done} of ${p.total} tests done`, `${p.failed} failed`];
  if (p.flaky > 0) parts.push(`${p.flaky} flaky`);
  if (p.time_left_ms !== null && p.done < p.total) parts.push(`about ${formatDuration(Math.max(1000, Math.round(p.time_left_ms / 1000) * 1000))} left`);
  return parts.join(' · ');
}

const SECTIONS: Record<string, string> = { failed: 'Failed', flaky: 'Flaky', passed: 'Passed and skipped', skipped: 'Passed and skipped' };

/** The table of a section, made (heading and table) where the page had none. */
function sectionTable(root: HTMLElement, title: string): HTMLTableSectionElement {
  const found = root.querySelector<HTMLTableElement>(`table.tests[data-section="${title}"]`);
  if (found?.tBodies[0]) return found.tBodies[0];
  const heading = element('h2', null, title);
  const table = element('table', 'tests');
  table.dataset.section = title;
  const head = table.createTHead().insertRow();
  for (const label of ['Status', 'Test', 'Duration', 'Retries', 'Failure group']) {
    const th = element('th', null, label);
    th.scope = 'col';
    head.append(th);
  }
  const body = table.createTBody();
  // Failures first, then flaky, the others last, as the server orders them.
  const counts = root.querySelector('.counts');
  const failed = root.querySelector('table.tests[data-section="Failed"]');
  if (title === 'Failed' && counts) counts.after(heading, table);
  else if (title === 'Flaky' && (failed ?? counts)) (failed ?? (counts as Element)).after(heading, table);
  else root.append(heading, table);
  return body;
}

function resultRow(result: LiveResult, groupBase: string): HTMLTableRowElement {
  const row = element('tr', result.status);
  row.dataset.test = result.test_case_id;
  row.dataset.live = '';
  const status = element('td', 'status');
  status.append(element('span', `tag ${result.status}`, result.status));
  if (result.snoozed) status.append(' ', element('span', 'tag snoozed', 'snoozed'));
  const test = element('td', 'test');
  test.append(element('strong', null, result.title));
  test.append(element('div', 'file', `${result.file_path}${result.runner_project ? ` · ${result.runner_project}` : ''}`));
  if (result.error_message && (result.status === 'failed' || result.status === 'flaky')) {
    const error = element('pre', 'error', result.error_message);
    error.tabIndex = 0;
    test.append(error);
  }
  const duration = element('td', 'duration', formatDuration(result.duration));
  duration.dataset.label = 'Duration';
  const retries = element('td', 'retries', String(result.retries));
  retries.dataset.label = 'Retries';
  const group = element('td', 'group');
  group.dataset.label = 'Failure group';
  if (result.failure_group_id) {
    const link = element('a', null, result.failure_group_id);
    link.href = `${groupBase}${encodeURIComponent(result.failure_group_id)}`;
    group.append(link);
  }
  row.append(status, test, duration, retries, group);
  return row;
}

/** A result into its section: a row the page shows already is replaced (a result the page read and the stream sent too). */
function showResult(root: HTMLElement, result: LiveResult, groupBase: string): void {
  const title = SECTIONS[result.status] ?? 'Passed and skipped';
  for (const old of Array.from(root.querySelectorAll<HTMLTableRowElement>('tr[data-test]'))) {
    if (old.dataset.test === result.test_case_id) old.remove();
  }
  sectionTable(root, title).append(resultRow(result, groupBase));
}

function showProgress(root: HTMLElement, progress: LiveProgress): void {
  const counts: Record<string, number> = {
    total: progress.done,
    passed: progress.passed,
    failed: progress.failed,
    flaky: progress.flaky,
    skipped: progress.skipped,
    snoozed: progress.snoozed,
  };
  for (const [name, n] of Object.entries(counts)) {
    const b = root.querySelector(`[data-count="${name}"] b`);
    if (b) b.textContent = String(n);
  }
  for (const table of Array.from(root.querySelectorAll<HTMLTableElement>('table.tests[data-section]'))) {
    const heading = table.previousElementSibling;
    if (heading?.tagName === 'H2') heading.textContent = `${table.dataset.section} (${table.tBodies[0]?.rows.length ?? 0})`;
  }
  const state = root.querySelector('h1 .state');
  if (state) {
    state.className = `state state-${progress.state}`;
    state.textContent = progress.state;
  }
  const line = root.querySelector('[data-live-progress]');
  if (line) line.textContent = progressLine(progress);
}

/** A run under way: its stream's results and progress into the page. */
function streamRun(root: HTMLElement): void {
  const url = new URL(root.dataset.liveEvents ?? '', location.href);
  if (root.dataset.liveFrom) url.searchParams.set('from', root.dataset.liveFrom);
  const groupBase = root.dataset.groupBase ?? '';
  const source = new EventSource(url.pathname + url.search);
  source.addEventListener('progress', (event) => {
    const data = JSON.parse((event as MessageEvent<string>).data) as { results: LiveResult[]; progress: LiveProgress | null };
    for (const result of data.results) showResult(root, result, groupBase);
    if (data.progress) showProgress(root, data.progress);
    root.dataset.received = String(Number(root.dataset.received ?? '0') + data.results.length);
  });
  source.addEventListener('end', (event) => {
    source.close();
    const { state } = JSON.parse((event as MessageEvent<string>).data) as { state: string };
    root.dataset.state = state;
    const line = root.querySelector('[data-live-progress]');
    if (line) line.textContent = `The run ended: ${state}. Reload for its failure groups, attachments and actions.`;
    void showEndedRun(root);
  });
}

/**
 * The run's report as the server draws an ended run, put in place of what was streamed: its
 * failure groups, screenshots, traces and actions come with it, with no reload (the window and the
 * reader's place stay). Where it cannot be read, the line above asks for a reload.
 */
async function showEndedRun(root: HTMLElement): Promise<void> {
  try {
    const response = await fetch(location.href, { headers: { accept: 'text/html' } });
    if (!response.ok) return;
    const fresh = new DOMParser().parseFromString(await response.text(), 'text/html').querySelector('[data-run-report]');
    if (!fresh) return;
    root.replaceWith(document.importNode(fresh, true));
    labelCells(document);
  } catch {
    // The streamed rows stay, with the line that asks for a reload.
  }
}

/** A run's row in a list of runs: the cells as the server draws them (dashboard/pages.ts runRow). */
function runRow(run: LiveRunRow, projectId: string): HTMLTableRowElement {
  const row = element('tr', null);
  row.dataset.run = String(run.id);
  row.dataset.live = '';
  const link = element('a', null, `#${run.number}`);
  link.href = `/projects/${projectId}/runs/${run.id}`;
  const cells = [
    element('td', null),
    element('td', null),
    element('td', null, run.environment_name),
    element('td', null, run.branch ?? ''),
    element('td', 'muted', run.commit ?? ''),
    element('td', null),
    element('td', 'muted', run.created_at),
  ];
  cells[0]?.append(link);
  cells[1]?.setAttribute('data-state-cell', '');
  cells[5]?.setAttribute('data-counts', '');
  row.append(...cells);
  return row;
}

/** A run's state and counts into its row. */
function showRunCounts(row: Element, run: LiveRunRow): void {
  const counts = row.querySelector('[data-counts]');
  if (counts) counts.textContent = `${run.success_count} passed · ${run.failed_count} failed · ${run.flaky_count} flaky`;
  const cell = row.querySelector('[data-state-cell]');
  if (cell) cell.replaceChildren(element('span', `state state-${run.state}`, run.state));
}

/**
 * A list of runs: each listed run's state and counts in place as they move, and the runs made since
 * the page was read (that its filter shows) added at the top, newest first, as they are made.
 */
function streamList(table: HTMLTableElement): void {
  const source = new EventSource(table.dataset.liveEvents ?? '');
  const body = table.tBodies[0];
  source.addEventListener('run', (event) => {
    const run = JSON.parse((event as MessageEvent<string>).data) as LiveRunRow;
    let row = table.querySelector(`tr[data-run="${run.id}"]`);
    if (!row && body) {
      row = runRow(run, table.dataset.project ?? '');
      // Newest first: before the first row of an older run.
      const older = Array.from(body.rows).find((other) => Number(other.dataset.run) < run.id);
      body.insertBefore(row, older ?? null);
      table.hidden = false;
      document.querySelector('[data-runs-empty]')?.remove();
      labelCells(document);
    }
    if (row) showRunCounts(row, run);
  });
  source.addEventListener('end', () => source.close());
}

/** A list of runs with some under way, and a run under way, stay fresh. */
export function watchLiveParts(root: Document): void {
  const streams = typeof EventSource === 'function';
  const list = root.querySelector<HTMLTableElement>('table[data-live-url]');
  const url = list?.dataset.liveUrl;
  if (list && url) {
    if (streams && list.dataset.liveEvents) streamList(list);
    else
      watch(
        url,
        (body: { data: { test_runs: { id: number; state: string; total_count: number }[] } }) =>
          body.data.test_runs.map((r) => `${r.id}:${r.state}:${r.total_count}`).join(','),
        list.dataset.fingerprint ?? null,
      );
  }
  const run = root.querySelector<HTMLElement>('[data-live-run]');
  if (run) {
    if (streams && run.dataset.liveEvents) streamRun(run);
    else
      watch(
        `/api/test-runs/${run.dataset.liveRun}`,
        (body: { data: { test_run: { testRun: { state: string } } } }) => body.data.test_run.testRun.state,
        run.dataset.state ?? null,
      );
  }
}
