// What other features and the jobs layer may use of analytics: a run's end queues its rollup, and
// a job writes it.
export { enqueueRollup, queuedRollups } from './queue.ts';
export { rollUpNext } from './roll-up-next.ts';
