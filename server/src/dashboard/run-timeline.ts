import { h } from 'preact';
import type { Project } from '../projects/index.ts';
import type { RunTimeline as Timeline } from '../runs/index.ts';
import { renderHtml } from './components/html.ts';
import { RunTimeline } from './components/run-timeline.tsx';

/**
 * The run's timeline section as HTML (components/run-timeline.tsx rendered), for the run page while
 * it is built as a string; nothing for a run with no attempt that has a start time.
 */
export function runTimelineSection(project: Project, timeline: Timeline | null): string {
  return timeline ? renderHtml(h(RunTimeline, { projectId: project.id, timeline })) : '';
}
