// What the jobs layer and the dashboard may use of runs: the queue, a run's execution and its end,
// and the runs of a project as the API lists them.
export { branchNote, resolveBranch, shownBranch } from './branch.ts';
export { failRun } from './finish.ts';
export { handOverLostRuns, type LostRunsHandled } from './takeover.ts';
export { endShard } from './ingest.ts';
export {
  type ClaimedRun,
  claimAgentRun,
  claimRun,
  createPendingRun,
  distributeToAgents,
  findOrCreateAgentRun,
  heartbeat,
  markArtifactsDeleted,
  markDetailsDeleted,
  recordBranch,
  recordHeadSha,
  recordPlan,
  setPinned,
} from './record.ts';
export { runDetails, type RunPageDetails, runPageDetails } from './details.ts';
export { RUN_REPORT_STYLE, RunReport, type ReportActions, STATE_COLOURS } from './page.tsx';
export { presentRun, summaryUrl } from './present.ts';
export { commitsCompareUrl } from './repository.ts';
export { formatDuration } from './page.tsx';
export { RUN_NUMBER, type SummaryDetail } from './schema.ts';
export { failureLocations, getRunById, listRuns, previousRun, runNumbers, type RunRow } from './store.ts';
export { laneTimeline, type RunTimeline, type TimelineAttempt, type TimelineLane } from './timeline.ts';
export { TIMELINE_ATTEMPTS, timelineAttempts } from './timeline-store.ts';
export { triggerBaselineRerun, triggerRun } from './trigger.ts';
export { triggerSchema } from './schema.ts';
export { countResults, DETAILS_CHUNK, deleteDetailsChunk, lockUnpinned } from './expire-store.ts';
export { getRun } from './store.ts';
export { beginUploadShard, endUploadShard, recordUploadBatch, TestRecordedAlreadyError, type UploadShard, type UploadTarget } from './upload.ts';
export { startedNoLaterThan } from './record.ts';
export { type UploadCounts, uploadedResults } from './store.ts';
export { type ResultWrite } from './results.ts';
export { type Attempt, isStorableStartedAt } from './schema.ts';
export { livePosition, presentProgress } from './live.ts';
export type { LiveResult, LiveRunRow } from './live-store.ts';
export { endLiveStreams, liveQuery, runsListOf, runsListQuery, streamClient, streamRun, streamRunsList } from './live-routes.ts';
