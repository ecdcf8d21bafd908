/** One attempt on the timeline: when it started, how long it took, where it ran. */
export interface TimelineAttempt {
  test_case_id: string;
  title: string;
  shard: number;
  /** The agent that ran the attempt's unit (a run spread over agents reports each unit as a shard); null otherwise. */
  agent_id: number | null;
  agent: string | null;
  /** Playwright's worker slot; null when the reporter did not send it (older ones, JUnit uploads). */
  parallel_index: number | null;
  retry: number;
  status: string;
  started_at: Date;
  duration: number;
}

/** A lane of the timeline: one worker of a shard (or agent), its attempts in the order they ran. */
export interface TimelineLane {
  /** Where the worker ran: `shard 2`, or `agent <name>` for a run spread over agents. */
  place: string;
  kind: 'shard' | 'agent';
  /** The place's order: its shard's number, or its agent's id. */
  order: number;
  /** The worker slot; for attempts sent without one, lanes are packed from their times (`packed`). */
  worker: number;
  packed: boolean;
  attempts: TimelineAttempt[];
  /** The lane's first start and last end, ms after the run's first start; its busy time, ms. */
  start: number;
  end: number;
  busy: number;
}

export interface RunTimeline {
  /** The run's first attempt's start; every offset is from it. */
  origin: Date;
  /** From the first start to the last end, ms. */
  span: number;
  lanes: TimelineLane[];
  /** Attempts with a start time, of which `lanes` draw the first `TIMELINE_ATTEMPTS`. */
  total: number;
}

/**
 * The attempts laid out as lanes, by shard then worker. Attempts sent without their worker are put
 * in the shard's first lane free at their start: the run's concurrency, if not which worker it was.
 */
export function laneTimeline(attempts: TimelineAttempt[], total = attempts.length): RunTimeline | null {
  const first = attempts[0];
  if (!first) return null;
  const origin = first.started_at.getTime();
  const lanes = new Map<string, TimelineLane>();
  const packedEnds = new Map<string, number[]>();
  for (const attempt of attempts) {
    const start = attempt.started_at.getTime() - origin;
    const end = start + attempt.duration;
    const kind = attempt.agent_id === null ? 'shard' : 'agent';
    const place = kind === 'agent' ? `agent ${attempt.agent}` : `shard ${attempt.shard}`;
    let worker = attempt.parallel_index;
    const packed = worker === null;
    if (worker === null) {
      const ends = packedEnds.get(place) ?? [];
      const free = ends.findIndex((laneEnd) => laneEnd <= start);
      worker = free === -1 ? ends.length : free;
      ends[worker] = end;
      packedEnds.set(place, ends);
    }
    const key = `${place}\u0000${packed ? 'p' : 'w'}${worker}`;
    const order = attempt.agent_id ?? attempt.shard;
    const lane = lanes.get(key) ?? { place, kind, order, worker, packed, attempts: [], start, end, busy: 0 };
    lane.attempts.push(attempt);
    lane.start = Math.min(lane.start, start);
    lane.end = Math.max(lane.end, end);
    lane.busy += attempt.duration;
    lanes.set(key, lane);
  }
  const ordered = [...lanes.values()].sort(
    (a, b) => a.kind.localeCompare(b.kind) || a.order - b.order || Number(a.packed) - Number(b.packed) || a.worker - b.worker,
  );
  return { origin: first.started_at, span: Math.max(1, ...ordered.map((lane) => lane.end)), lanes: ordered, total };
}
