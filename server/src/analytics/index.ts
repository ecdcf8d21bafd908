// What other features and the jobs layer may use of analytics: a run's end queues its rollup, a
// job writes it, and which tests an environment has run.
export { enqueueRollup, queuedRollups } from './queue.ts';
export { rollUpNext } from './roll-up-next.ts';
export { testsSeenIn } from './store.ts';
