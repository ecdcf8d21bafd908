// Which free units an agent's batch takes: the pure part of a lease with a budget (leaseUnit holds
// the run's lock while it asks, so that agents leasing at once are packed against one another).

export interface PackUnit {
  unit: number;
  runner_project: string;
  /** From the environment's history; null for a unit never run. */
  estimate_ms: number | null;
}

/** Another agent of the run heard from within the lease time, and the work it holds. */
export interface OtherAgent {
  /** The estimates of the units it holds and has not ended (none when it is between batches). */
  held: (number | null)[];
  /** Since it leased them: the part of their work it has done. */
  elapsed_ms: number;
}

export interface PackInput {
  /** The units free for this agent, longest first (unknown estimates first), as leaseNext orders them. */
  free: PackUnit[];
  others: OtherAgent[];
  /** The most the batch's estimates may sum to (its first unit is taken whatever its estimate). */
  budget_ms: number;
}

/**
 * The units of this agent's batch, longest first: the free units are shared out over the run's
 * agents longest first, each to the agent with the least work left (longest-processing-time first;
 * this agent on a tie, so that it takes the longest free unit); this agent's units of the longest
 * one's runner project then make its batch, while they fit in the budget. Agents that lease at once
 * are each given a part of one partition of the run, so no unit is left over for a second
 * Playwright start; an agent that comes back while the others are still busy takes the part that
 * evens out their ends. A free unit never run counts as the mean of the known ones; with none
 * known, the batch is at most the free units over twice the agents. Never empty while a unit is free.
 */
export function packBatch({ free, others, budget_ms }: PackInput): number[] {
  const first = free[0];
  if (!first) return [];
  const agents = others.length + 1;
  const known = [...free.map((unit) => unit.estimate_ms), ...others.flatMap((other) => other.held)].filter((ms): ms is number => ms !== null);
  if (known.length === 0) {
    const sameProject = free.filter((unit) => unit.runner_project === first.runner_project);
    // Nothing to size by: a share of the free units by count, halved, as they may be of any length.
    const most = Math.max(1, Math.ceil((free.length + 1) / (2 * agents)));
    return sameProject.slice(0, most).map((unit) => unit.unit);
  }
  const mean = known.reduce((a, b) => a + b, 0) / known.length;
  const estimate = (ms: number | null) => ms ?? mean;
  // Each agent's work left: another's is what it holds beyond what it did already; this one's, the
  // first free unit, which it takes whatever the others hold (so that a free unit is never left idle).
  const loads = [
    estimate(first.estimate_ms),
    ...others.map((other) => Math.max(0, other.held.reduce<number>((sum, ms) => sum + estimate(ms), 0) - other.elapsed_ms)),
  ];
  const ours: PackUnit[] = [];
  const rest = free.slice(1).sort((a, b) => estimate(b.estimate_ms) - estimate(a.estimate_ms) || a.unit - b.unit);
  for (const unit of rest) {
    let least = 0;
    for (let i = 1; i < loads.length; i++) if ((loads[i] as number) < (loads[least] as number)) least = i;
    loads[least] = (loads[least] as number) + estimate(unit.estimate_ms);
    if (least === 0) ours.push(unit);
  }
  // A batch is of one runner project (one Playwright's locations select in every project it is
  // given): this agent's units of another project stay free for the next lease.
  const batch = [first];
  let sum = estimate(first.estimate_ms);
  for (const unit of ours) {
    if (unit.runner_project !== first.runner_project || sum + estimate(unit.estimate_ms) > budget_ms) continue;
    sum += estimate(unit.estimate_ms);
    batch.push(unit);
  }
  return batch.map((unit) => unit.unit);
}
