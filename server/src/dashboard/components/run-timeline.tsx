import { formatDuration, type RunTimeline as Timeline, TIMELINE_ATTEMPTS, type TimelineLane } from '../../runs/index.ts';

/**
 * A run's timeline on its page: a lane for each worker of each shard, its tests as bars where they
 * ran, so a shard that ended late and a worker that sat idle show at a glance. The bars are named
 * (a title each, for the pointer); a table lists the same attempts, lane by lane, for a screen reader
 * and for a phone. Its own component, so the run page only places it.
 */

/** The track's width in the SVG's units: the run's span is drawn across it. */
const TRACK = 1000;
/** A lane busy less than this share of the run's span is marked idle. */
const IDLE_BELOW = 0.5;

const offset = (ms: number) => {
  const seconds = Math.round(ms / 1000);
  return `+${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
};
const laneName = (lane: TimelineLane) => `${lane.place} · ${lane.packed ? 'lane' : 'worker'} ${lane.worker + (lane.packed ? 1 : 0)}`;
const percent = (part: number, whole: number) => `${Math.round((part / Math.max(1, whole)) * 100)}%`;

function Track(props: { timeline: Timeline; lane: TimelineLane }) {
  const { timeline, lane } = props;
  const scale = TRACK / timeline.span;
  return (
    <svg
      class="track"
      viewBox={`0 0 ${TRACK} 20`}
      preserveAspectRatio="none"
      width="100%"
      height="20"
      role="img"
      aria-label={`${laneName(lane)}: ${lane.attempts.length} attempts, busy ${percent(lane.busy, timeline.span)} of the run`}
      xmlns="http://www.w3.org/2000/svg"
    >
      <rect class="tl-idle" x="0" y="0" width={TRACK} height="20" />
      {lane.attempts.map((attempt) => {
        const start = attempt.started_at.getTime() - timeline.origin.getTime();
        const text = `${attempt.title}: ${attempt.status}${attempt.retry > 0 ? ` (retry ${attempt.retry})` : ''}, from ${offset(start)} for ${formatDuration(attempt.duration)}`;
        return (
          <rect class={`tl-${attempt.status}`} x={(start * scale).toFixed(1)} y="2" width={Math.max(1, attempt.duration * scale).toFixed(1)} height="16">
            <title>{text}</title>
          </rect>
        );
      })}
    </svg>
  );
}

function Summary(props: { timeline: Timeline }) {
  const { timeline } = props;
  // Where the workers ran (shards, or agents) and when each place's last test ended.
  const places = new Map<string, { kind: string; end: number }>();
  for (const lane of timeline.lanes) places.set(lane.place, { kind: lane.kind, end: Math.max(places.get(lane.place)?.end ?? 0, lane.end) });
  const ends = [...places.entries()].sort((a, b) => b[1].end - a[1].end);
  const attempts = timeline.lanes.reduce((sum, lane) => sum + lane.attempts.length, 0);
  const kinds = [...new Set([...places.values()].map((place) => place.kind))];
  const count = kinds.map((kind) => {
    const n = [...places.values()].filter((place) => place.kind === kind).length;
    return `${n} ${kind}${n === 1 ? '' : 's'}`;
  });
  const parts = [
    `${attempts} attempts on ${timeline.lanes.length} lane${timeline.lanes.length === 1 ? '' : 's'} in ${count.join(' and ')}, over ${formatDuration(timeline.span)}.`,
  ];
  const [slowest, next] = ends;
  const firstEnd = ends[ends.length - 1];
  if (slowest && next && firstEnd)
    parts.push(`Last to end: ${slowest[0]}, ${formatDuration(slowest[1].end - firstEnd[1].end)} after the first ${firstEnd[1].kind} to end.`);
  const idlest = [...timeline.lanes].sort((a, b) => a.busy - b.busy)[0];
  if (idlest && timeline.lanes.length > 1) parts.push(`Idlest: ${laneName(idlest)}, busy ${percent(idlest.busy, timeline.span)} of the run.`);
  if (timeline.total > attempts) parts.push(`The first ${TIMELINE_ATTEMPTS} of ${timeline.total} attempts are drawn.`);
  return <p class="timeline-summary">{parts.join(' ')}</p>;
}

function AttemptsTable(props: { projectId: number; timeline: Timeline }) {
  const { timeline } = props;
  return (
    <details class="timeline-table">
      <summary>The timeline as a table</summary>
      <table>
        <thead>
          <tr>
            {['Lane', 'Order', 'Test', 'Start', 'Duration', 'Status'].map((name) => (
              <th scope="col">{name}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {timeline.lanes.flatMap((lane) =>
            lane.attempts.map((attempt, i) => (
              <tr>
                <td>{laneName(lane)}</td>
                <td>{i + 1}</td>
                <td>
                  <a href={`/projects/${props.projectId}/tests/${attempt.test_case_id}`}>{attempt.title}</a>
                  {attempt.retry > 0 ? (
                    <>
                      {' '}
                      <span class="muted">retry {attempt.retry}</span>
                    </>
                  ) : null}
                </td>
                <td>{offset(attempt.started_at.getTime() - timeline.origin.getTime())}</td>
                <td>{formatDuration(attempt.duration)}</td>
                <td>{attempt.status}</td>
              </tr>
            )),
          )}
        </tbody>
      </table>
    </details>
  );
}

/** The run's timeline section; nothing for a run with no attempt that has a start time. */
export function RunTimeline(props: { projectId: number; timeline: Timeline | null }) {
  const { timeline } = props;
  if (!timeline) return null;
  const latest = Math.max(...timeline.lanes.map((lane) => lane.end));
  return (
    <section class="timeline" aria-labelledby="run-timeline">
      <h2 id="run-timeline">Timeline</h2>
      <Summary timeline={timeline} />
      <ol class="lanes">
        {timeline.lanes.map((lane) => {
          const idle = lane.busy / timeline.span < IDLE_BELOW;
          const last = lane.end === latest && timeline.lanes.length > 1;
          return (
            <li class={idle ? 'lane idle' : 'lane'}>
              <div class="lane-name">
                <strong>{laneName(lane)}</strong>{' '}
                <span class="muted">
                  {lane.attempts.length} tests · busy {percent(lane.busy, timeline.span)} · to {offset(lane.end)}
                </span>
                {last ? (
                  <>
                    {' '}
                    <span class="tl-mark">ended last</span>
                  </>
                ) : null}
                {idle ? (
                  <>
                    {' '}
                    <span class="tl-mark">idle</span>
                  </>
                ) : null}
              </div>
              <Track timeline={timeline} lane={lane} />
            </li>
          );
        })}
      </ol>
      <div class="tl-axis" aria-hidden="true">
        {[0, 0.25, 0.5, 0.75, 1].map((f) => (
          <span>{offset(timeline.span * f)}</span>
        ))}
      </div>
      <AttemptsTable projectId={props.projectId} timeline={timeline} />
    </section>
  );
}
