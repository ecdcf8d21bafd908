// What other features may use of duration shifts: the rollup records them, the dashboard reads them.
export { slowerTestRoutes } from './routes.ts';
export { recordDurationShifts } from './service.ts';
export { listSlowerTests, type ShiftMark, shiftsInRunEnvironment, type SlowerTestRow } from './store.ts';
export { slowerTestView } from './view.ts';
export type { SlowerTest } from './schema.ts';
export { SHIFT_RULES } from './shift.ts';
