import { api } from './api.ts';

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

/** A list of runs with some under way, and a run under way, stay fresh. */
export function watchLiveParts(root: Document): void {
  const list = root.querySelector<HTMLElement>('[data-live-url]');
  const url = list?.dataset.liveUrl;
  if (list && url) {
    watch(
      url,
      (body: { data: { test_runs: { id: number; state: string; total_count: number }[] } }) =>
        body.data.test_runs.map((r) => `${r.id}:${r.state}:${r.total_count}`).join(','),
      list.dataset.fingerprint ?? null,
    );
  }
  const run = root.querySelector<HTMLElement>('[data-live-run]');
  if (run) {
    watch(
      `/api/test-runs/${run.dataset.liveRun}`,
      (body: { data: { test_run: { testRun: { state: string } } } }) => body.data.test_run.testRun.state,
      run.dataset.state ?? null,
    );
  }
}
