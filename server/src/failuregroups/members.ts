/** One event of a member's log, in the order it was written. */
export interface MemberEvent {
  test_case_id: string;
  kind: 'attach' | 'sighting' | 'detach';
  source: 'machine' | 'human';
  actor_id: string | null;
  test_run_id: number | null;
  environment_id: number | null;
  occurred_at: Date;
}

export interface Member {
  test_case_id: string;
  state: 'active' | 'detached';
  source: 'machine' | 'human';
  first_seen_at: string;
  first_test_run_id: number | null;
  last_seen_at: string;
  last_test_run_id: number | null;
  last_environment_id: number | null;
  environments: number[];
  sighting_count: number;
  chat_session_id: number | null;
  match_run_id: string | null;
  actor_id: string | null;
  detached_at: string | null;
  detached_by: string | null;
}

interface Folded {
  member: Member;
  runs: Set<number | null>;
  detachedBy: 'machine' | 'human' | null;
}

function newMember(event: MemberEvent): Folded {
  const at = event.occurred_at.toISOString();
  return {
    runs: new Set(),
    detachedBy: null,
    member: {
      test_case_id: event.test_case_id,
      state: 'active',
      source: event.source,
      first_seen_at: at,
      first_test_run_id: event.test_run_id,
      last_seen_at: at,
      last_test_run_id: event.test_run_id,
      last_environment_id: event.environment_id,
      environments: [],
      sighting_count: 0,
      chat_session_id: null,
      match_run_id: null,
      actor_id: event.actor_id,
      detached_at: null,
      detached_by: null,
    },
  };
}

function apply(folded: Folded, event: MemberEvent): void {
  const { member } = folded;
  const at = event.occurred_at.toISOString();
  if (event.kind === 'detach') {
    member.state = 'detached';
    member.detached_at = at;
    member.detached_by = event.actor_id ?? event.source;
    folded.detachedBy = event.source;
    return;
  }
  folded.runs.add(event.test_run_id);
  member.sighting_count = folded.runs.size;
  member.last_seen_at = at;
  member.last_test_run_id = event.test_run_id;
  member.last_environment_id = event.environment_id;
  if (event.environment_id !== null && !member.environments.includes(event.environment_id)) {
    member.environments = [...member.environments, event.environment_id].sort((a, b) => a - b);
  }
  if (event.kind === 'attach') {
    member.state = 'active';
    member.source = event.source;
    member.actor_id = event.actor_id;
    member.detached_at = null;
    member.detached_by = null;
    folded.detachedBy = null;
  }
}

function fold(events: MemberEvent[]): Map<string, Folded> {
  const members = new Map<string, Folded>();
  for (const event of events) {
    let folded = members.get(event.test_case_id);
    if (!folded) {
      if (event.kind === 'detach') continue;
      folded = newMember(event);
      members.set(event.test_case_id, folded);
    }
    apply(folded, event);
  }
  return members;
}

/** Each member as its events, oldest first, leave it. */
export function foldMembers(events: MemberEvent[]): Member[] {
  return [...fold(events).values()].map((folded) => folded.member);
}

export type AttachDecision = 'attach' | 'sighting' | 'nothing';

/**
 * What an attach of one member by `source` in run `testRunId` writes: `attach` for a new member
 * or one it brings back (a human brings back anything, a machine only a machine's detach),
 * `sighting` for a run not yet seen, `nothing` for a run already seen.
 */
export function decideAttach(memberEvents: MemberEvent[], source: 'machine' | 'human', testRunId: number): AttachDecision {
  const folded = [...fold(memberEvents).values()][0];
  if (!folded) return 'attach';
  if (folded.member.state === 'detached' && (source === 'human' || folded.detachedBy !== 'human')) return 'attach';
  return folded.runs.has(testRunId) ? 'nothing' : 'sighting';
}
