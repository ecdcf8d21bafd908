// What the jobs layer may use of runs: the queue, a run's execution, and its end.
export { resolveBranch } from './branch.ts';
export { failRun } from './finish.ts';
export { endShard } from './ingest.ts';
export { type ClaimedRun, claimRun, createPendingRun, heartbeat, lostRunIds, recordBranch, recordHeadSha } from './record.ts';
