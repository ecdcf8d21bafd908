// Which free units an agent's batch takes: the pure part of a lease with a budget (leaseUnit holds
// the run's lock while it asks, so that agents leasing at once are packed against one another).

export interface PackUnit {
  unit: number;
  runner_project: string;
  /** From the environment's history; null for a unit never run. */
  estimate_ms: number | null;
  /** Its place in a failures-first run's order (1 first); null or absent for a unit with no sign of failing. */
  risk_rank?: number | null;
  /** Its spec file as planned (relative to the suite's root): where Playwright's file order puts it. */
  file?: string;
}

/**
 * Playwright's order of two spec files in one run: it walks the test folder depth first, each
 * folder's entries by name (`localeCompare`), and hands its workers the files' tests in that order.
 * Negative when `a` runs first; 0 for one file.
 */
export function playwrightFileOrder(a: string, b: string): number {
  const left = a.split('/');
  const right = b.split('/');
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const order = (left[i] as string).localeCompare(right[i] as string);
    if (order !== 0) return order;
  }
  return left.length - right.length;
}

/** Whether Playwright runs `unit` after every ranked unit of `batch`: its file comes after all of theirs. */
function runsAfterRanked(unit: PackUnit, batch: PackUnit[]): boolean {
  const file = unit.file;
  if (file === undefined) return false;
  return batch.every((other) => other.risk_rank == null || (other.file !== undefined && playwrightFileOrder(file, other.file) > 0));
}

/** Another agent of the run heard from within the lease time, and the work it holds. */
export interface OtherAgent {
  /** The estimates of the units it holds and has not ended (none when it is between batches). */
  held: (number | null)[];
  /** Since it leased them: the part of their work it has done. */
  elapsed_ms: number;
}

export interface PackInput {
  /** The units free for this agent in lease order (ranked first, then longest, unknown estimates first), as leaseNext orders them. */
  free: PackUnit[];
  others: OtherAgent[];
  /** The most the batch's estimates may sum to (its first unit is taken whatever its estimate). */
  budget_ms: number;
}

/**
 * The units of this agent's batch, longest first (a failures-first run's ranked units before the
 * rest, in rank order): the free units are shared out over the run's agents longest first, each to the agent with the least work left (longest-processing-time first;
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
  // Failures first: the ranked units are shared out first, in their order, so that every agent's
  // first batch starts on the likeliest failures; the rest longest first, which evens the ends out.
  const rank = (unit: PackUnit) => unit.risk_rank ?? Number.POSITIVE_INFINITY;
  const rest = free
    .slice(1)
    .sort((a, b) => (rank(a) === rank(b) ? 0 : rank(a) - rank(b)) || estimate(b.estimate_ms) - estimate(a.estimate_ms) || a.unit - b.unit);
  for (const unit of rest) {
    let least = 0;
    for (let i = 1; i < loads.length; i++) if ((loads[i] as number) < (loads[least] as number)) least = i;
    loads[least] = (loads[least] as number) + estimate(unit.estimate_ms);
    if (least === 0) ours.push(unit);
  }
  // A batch is of one runner project (one Playwright's locations select in every project it is
  // given): this agent's units of another project stay free for the next lease. A batch that starts
  // on a ranked unit takes an unranked one only when Playwright runs it after every ranked unit of
  // the batch (its file comes later in Playwright's file order): one Playwright runs its batch in
  // its own file order, so an unranked file before would run ahead of a likely failure; one after
  // spares this agent a Playwright start of its own. (`ours` holds the ranked units first.)
  const batch = [first];
  const rankedFirst = first.risk_rank != null;
  let sum = estimate(first.estimate_ms);
  for (const unit of ours) {
    if (rankedFirst && unit.risk_rank == null && !runsAfterRanked(unit, batch)) continue;
    if (unit.runner_project !== first.runner_project || sum + estimate(unit.estimate_ms) > budget_ms) continue;
    sum += estimate(unit.estimate_ms);
    batch.push(unit);
  }
  return batch.map((unit) => unit.unit);
}
