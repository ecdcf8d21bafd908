import type { client } from './http.ts';

// The demo server as its first start shows it: what it printed (its key, its sign-in link) and the
// runs of its sample suite, for the pictures and for bench/lighthouse.

/** The first match of `pattern` in what a process printed, waiting up to `timeoutMs` for it. */
export async function printed(output: () => string, pattern: RegExp, timeoutMs = 60_000): Promise<string> {
  for (const deadline = Date.now() + timeoutMs; ;) {
    const found = pattern.exec(output())?.[0];
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`the server never printed ${pattern}:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A run of `environment` triggered and waited for until it ends (5 minutes at most): its id. */
export async function runToEnd(api: ReturnType<typeof client>, environment: string): Promise<number> {
  const triggered = await api.put('/api/test-runs', { environment });
  if (triggered.status !== 200) throw new Error(`triggering a run answered ${triggered.status}: ${JSON.stringify(triggered.body)}`);
  const id = triggered.body.data.test_run.id as number;
  for (const deadline = Date.now() + 300_000; Date.now() < deadline;) {
    const state = (await api.get(`/api/test-runs/${id}`)).body.data.test_run.testRun.state as string;
    if (!['pending', 'queued', 'running'].includes(state)) return id;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new Error(`run ${id} did not end in 5 minutes`);
}
