// `proctor agent`: joins a run, checks its test repository out (or takes the CI job's workspace),
// plans the run's units if no agent did, then leases units one at a time and runs each with
// Playwright and Proctor's reporter until the run has no work left. The tests get a key scoped to
// the run and the runner's clean environment: never the agent's own key or environment.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { isTerminalState } from '../runs/client.ts';
import { changedTests } from '../toolchain/affected.ts';
import {
  hasTestList,
  isLocation,
  killMarked,
  killShard,
  ListingError,
  listTests,
  playwrightVersion,
  type Listing,
  type ShardProcess,
  shardArgs,
  spawnShard,
  type TestPick,
} from '../toolchain/playwright.ts';
import { withoutProjects } from '../toolchain/playwright-args.ts';
import { currentBranch, RepositoryError, resolveRepository, useWorkspace } from '../toolchain/repository.ts';
import { assertReachable, handOver, prepareRunner, type Runner } from '../toolchain/sandbox.ts';
import { checkOutAndInstall, suiteEnvironment } from '../toolchain/workspace.ts';
import { AgentApi, type AgentRunBody, type JoinAnswer, type Unit } from './client.ts';
import type { AgentLog } from './log.ts';
import type { UnitsFile } from '../reporter/unit-batch.ts';
import { planUnits } from './units.ts';
import { releaseWebServer, shareWebServer, WebServerError } from './web-server.ts';

export interface AgentSettings {
  url: string;
  key: string;
  target:
    | { kind: 'run'; runId: number }
    | {
        kind: 'build';
        environment: string;
        runKey: string;
        branch: string | null;
        commit: string | null;
        buildUrl: string | null;
        pullRequest: number | null;
        /** Fail fast (`--max-failures`): the run this agent makes stops after this many failures; null: the environment's limit. */
        maxFailures?: number | null;
      };
  name: string;
  /** Checkouts, the runner's home and its npm cache. */
  workdir: string;
  /** A checkout to use as it is (a CI job's), instead of checking the run's repository out. */
  workspace: string | null;
  /** Run the workspace's package manager's install when its dependencies are missing; else the agent refuses such a workspace. */
  install?: boolean;
  runnerUser: string;
  /** Given to every unit (after the environment's): `proctor-ci agent … -- <arguments>`, checked by playwrightArgsProblem. */
  playwrightArgs?: string[];
  /** The agents the run is expected to have (`--agents N`): the units' PROCTOR_AGENT_COUNT; else the agents joined so far. */
  agents?: number | null;
  /** Start the suite's web servers once for the agents of this machine, which its units then reuse. */
  shareWebServer?: boolean;
  /** The log's format as `--log-format` gave it; null: text on a terminal, JSON elsewhere. */
  logFormat?: 'json' | 'text' | null;
  /** Stops the agent (its server shutting down): the unit under way is stopped, its lease lapses to another agent. */
  signal?: AbortSignal;
}

export interface AgentExit {
  code: 0 | 1;
  reason: string;
}

/** The units this agent runs now (one Playwright), and what its heartbeat heard. */
interface Current {
  units: number[];
  shard: ShardProcess | null;
  /** The run's end state, once a heartbeat saw it ended (a cancel). */
  ended: string | null;
  /** The units' leases lapsed and went to other agents. */
  lost: boolean;
  /** What this agent's last Playwright took beyond its tests (its start, config, web server, exit), ms; null before one. */
  startMs: number | null;
}

/** A batch of units is leased to take about this many times its Playwright's start: the start is then 5% of it. */
const BATCH_PER_START = 20;
/** The start assumed before this agent measured one. */
const ASSUMED_START_MS = 5000;
/** The most a lease asks for (the server's bound). */
const MAX_BUDGET_MS = 3_600_000;

interface Prepared {
  dir: string;
  /** The branch checked out, which the run records when the CI named none; null when detached. */
  branch: string | null;
  /** A checkout of this agent's, removed at its end (not a workspace or a project's own folder). */
  ownCheckout: boolean;
  env: NodeJS.ProcessEnv;
  runner: Runner;
  /** The run's tags: with locations, they leave out the tests a location selects beside the unit's. */
  tags: string[];
  /** The environment's Playwright arguments, then the agent's own: the listing's and every unit's. */
  args: string[];
  /** A listing made while preparing (for --share-web-server), which a plan reuses. */
  listing: Listing | null;
  /** The web servers this agent shares with the others of its machine, released at its end. */
  webServers: Awaited<ReturnType<typeof shareWebServer>>[];
}

/** Runs the agent to its end: 0 when its run has no work left or has ended, 1 with the reason otherwise. */
export async function runAgent(settings: AgentSettings, log: AgentLog): Promise<AgentExit> {
  const api = new AgentApi(settings.url, settings.key);
  let prepared: Prepared | null = null;
  try {
    const runId = settings.target.kind === 'run' ? settings.target.runId : await api.agentRun(buildRunBody(settings.target));
    const joined = await api.join(runId, settings.name);
    if (!joined) return { code: 0, reason: `run ${runId} has ended: no work left` };
    log.info({ test_run_id: runId, agent_id: joined.agent.id }, 'joined the run');
    try {
      prepared = await prepare(settings, runId, joined, log);
    } catch (error) {
      await reportIfPlanner(api, runId, joined, (error as Error).message, log);
      throw error;
    }
    log.info({ dir: prepared.dir }, 'ready to run units');
    return await pullUnits(api, runId, joined, prepared, log, settings.signal);
  } catch (error) {
    return { code: 1, reason: (error as Error).message };
  } finally {
    for (const held of prepared?.webServers ?? [])
      await releaseWebServer(held).catch((error: unknown) => log.warn({ err: error }, 'could not stop the web server'));
    if (prepared?.ownCheckout) fs.rmSync(prepared.dir, { recursive: true, force: true });
  }
}

/**
 * An agent that fails before it can plan: when it is the one to plan the run (the first still
 * heard from), the run ends `error` with its reason rather than waiting, queued, for others that
 * would fail the same way; otherwise the agent to plan it does.
 */
async function reportIfPlanner(api: AgentApi, runId: number, joined: JoinAnswer, reason: string, log: AgentLog): Promise<void> {
  try {
    const lease = await api.lease(runId, joined.agent.id);
    if (lease.plan) await api.planFailed(runId, joined.agent.id, reason);
  } catch (error) {
    log.warn({ err: error }, 'could not report the failure to plan');
  }
}

/** The body that makes or finds the run of a CI build's agents. */
export function buildRunBody(target: Extract<AgentSettings['target'], { kind: 'build' }>): AgentRunBody {
  return {
    environment: target.environment,
    run_key: target.runKey,
    branch: target.branch,
    commit: target.commit,
    build_url: target.buildUrl,
    // Only when there is one: a server before 0.2.0 refuses the field.
    ...(target.pullRequest !== null ? { pull_request: target.pullRequest } : {}),
    // Only when set: a server before 0.3.0 refuses the field.
    ...(target.maxFailures != null ? { max_failures: target.maxFailures } : {}),
  };
}

/** The checkout (or the workspace) with its dependencies, and the tests' environment. */
async function prepare(settings: AgentSettings, runId: number, joined: JoinAnswer, log: AgentLog): Promise<Prepared> {
  const runner = prepareRunner(settings.workdir, settings.runnerUser);
  assertReachable(runner);
  const { checkout: wanted } = joined;
  let dir: string;
  let headSha: string | null;
  let branch: string | null;
  let ownCheckout = false;
  if (settings.workspace) {
    dir = path.resolve(settings.workspace);
    headSha = await promisify(execFile)('git', ['rev-parse', 'HEAD'], { cwd: dir }).then(
      ({ stdout }) => stdout.trim(),
      () => wanted.commit,
    );
    branch = await currentBranch(dir);
    // Used as it is: never written to, unless --install asks.
    await useWorkspace(dir, (line) => log.info({}, line), { install: settings.install === true, runner });
  } else {
    if (wanted.repo_url === null)
      throw new RepositoryError(
        "the project has no test repository: run the agent in the CI job's checkout with --workspace DIR, or set the project's repository",
      );
    const repository = await resolveRepository(wanted.repo_url);
    // A folder of this agent's own: agents on one machine may share a work folder.
    const folder = `${runId}-agent-${process.pid}`;
    ({ dir, headSha, branch, ownCheckout } = await checkOutAndInstall(
      { repository, branch: wanted.branch, commit: wanted.commit, workRoot: settings.workdir, folder, runner },
      (line) => log.info({}, line),
    ));
  }
  const env = {
    ...suiteEnvironment(runner, {
      checkoutDir: dir,
      envFiles: wanted.env_files,
      overrides: wanted.environment_variables_overrides,
      buildUrl: wanted.build_url,
      reporter: { url: settings.url, apiKey: joined.reporter_key, runId, commit: headSha, branch },
    }),
    ...agentPlace(settings, joined),
    ...(settings.shareWebServer ? { PROCTOR_SHARE_WEB_SERVER: '1' } : {}),
  };
  joined.checkout.commit = headSha;
  const args = [...(wanted.playwright_args ?? []), ...(settings.playwrightArgs ?? [])];
  const prepared: Prepared = { dir, branch, ownCheckout, env, runner, tags: wanted.tags, args, listing: null, webServers: [] };
  if (settings.shareWebServer) await shareWebServers(prepared, log);
  return prepared;
}

/**
 * PROCTOR_AGENT_INDEX: the agent's place in the run's join order (0 for the first), unique among
 * the run's agents, so that agents on one machine can pick ports apart; PROCTOR_AGENT_COUNT: the
 * `--agents N` expected, else the agents joined so far (never below the index + 1).
 */
function agentPlace(settings: AgentSettings, joined: JoinAnswer): Record<string, string> {
  const index = joined.agent.index ?? 0;
  const count = Math.max(settings.agents ?? joined.agent.joined ?? 1, index + 1);
  return { PROCTOR_AGENT_INDEX: String(index), PROCTOR_AGENT_COUNT: String(count) };
}

/** --share-web-server: the suite's web servers, started once for the agents of this machine. */
async function shareWebServers(prepared: Prepared, log: AgentLog): Promise<void> {
  prepared.listing = await listTests(prepared.dir, prepared.env, prepared.runner, prepared.args);
  const servers = prepared.listing.web_servers ?? [];
  if (servers.length === 0) throw new WebServerError("--share-web-server: the suite's config has no webServer to share");
  const refusing = servers.find((server) => !server.reuseExistingServer);
  if (refusing)
    throw new WebServerError(
      `--share-web-server: the suite's webServer (${refusing.url ?? `port ${refusing.port}`}) does not reuse a server already running (reuseExistingServer is not true with CI=1 and PROCTOR_SHARE_WEB_SERVER=1); set reuseExistingServer: !process.env.CI || !!process.env.PROCTOR_SHARE_WEB_SERVER`,
    );
  for (const server of servers)
    prepared.webServers.push(await shareWebServer(server, prepared.dir, prepared.env, prepared.runner, (line) => log.info({}, line)));
}

async function plan(api: AgentApi, runId: number, joined: JoinAnswer, prepared: Prepared, log: AgentLog): Promise<void> {
  const listing = prepared.listing ?? (await listTests(prepared.dir, prepared.env, prepared.runner, prepared.args));
  const { checkout: wanted } = joined;
  // Units name their tests as the suite's Playwright understands: --test-list from 1.56, locations before.
  const locations = !hasTestList(playwrightVersion(prepared.dir, prepared.runner));
  const units = planUnits(
    listing,
    { match: wanted.runner_projects_match, ignore: wanted.runner_projects_ignore, tags: wanted.tags, testIds: wanted.test_case_ids },
    locations,
  );
  const changed = joined.changed_since
    ? await changedTests({ dir: prepared.dir, env: prepared.env, runner: prepared.runner, playwrightArgs: prepared.args, base: joined.changed_since })
    : null;
  if (changed?.kind === 'unknown') log.info({ reason: changed.reason }, 'no test is known changed');
  const changedIds = changed?.kind === 'known' ? [...changed.ids] : null;
  const planned = await api.plan(runId, joined.agent.id, { commit: wanted.commit, branch: prepared.branch }, units, changedIds);
  log.info({ units: planned.units, ours: planned.planned }, planned.planned ? 'planned the run' : 'another agent planned the run first');
}

/**
 * Leases and runs units until none is left: the first agent plans the run while the others wait,
 * and an agent that waits for others' units takes one whose agent went silent.
 */
async function pullUnits(api: AgentApi, runId: number, joined: JoinAnswer, prepared: Prepared, log: AgentLog, signal?: AbortSignal): Promise<AgentExit> {
  const leaseMs = joined.lease_seconds * 1000;
  const current: Current = { units: [], shard: null, ended: null, lost: false, startMs: null };
  /** Units of this agent's that crashed: it exits 1 at its end, whatever the run's state. */
  const crashed: number[] = [];
  const end = (exit: AgentExit): AgentExit =>
    crashed.length === 0 ? exit : { code: 1, reason: `${exit.reason}; unit${crashed.length > 1 ? 's' : ''} ${crashed.join(', ')} crashed here` };
  const stop = () => {
    current.lost = true;
    if (current.shard) void killShard(current.shard);
  };
  signal?.addEventListener('abort', stop);
  const beat = setInterval(
    () => {
      api
        .heartbeat(runId, joined.agent.id)
        .then(({ state, units }) => {
          if (isTerminalState(state)) current.ended = state;
          // Every unit of the batch went to other agents; one still held here keeps its Playwright going.
          if (current.units.length > 0 && !current.units.some((unit) => units.includes(unit))) current.lost = true;
          // Stopped, or given to another agent after a silence: this copy would only repeat its results.
          if ((current.ended || current.lost) && current.shard) void killShard(current.shard);
        })
        .catch(async (error: unknown) => {
          // The token is refused from the run's end on: that is how a cancel reaches this agent.
          const state = await api.endOf(runId, error);
          if (!state) return log.warn({ err: error }, 'heartbeat failed');
          current.ended = state;
          if (current.shard) void killShard(current.shard);
        });
    },
    Math.max(100, leaseMs / 3),
  );
  const watch = watchForEnd(api, runId, joined.agent.id, current, log);
  try {
    return end(await leaseUntilDone(api, runId, joined, prepared, current, crashed, log, signal));
  } catch (error) {
    // A plan, a lease or a crash report refused because the run ended meanwhile: this agent is done.
    const state = await api.endOf(runId, error);
    if (state) return end(ended(runId, state));
    throw error;
  } finally {
    clearInterval(beat);
    watch.stop();
    signal?.removeEventListener('abort', stop);
  }
}

/** How often an agent asks its run's state between heartbeats: a cancel stops its Playwright within about this. */
export const END_CHECK_MS = 1000;

/**
 * Asks the run's state every END_CHECK_MS while the agent works, apart from its heartbeat (a
 * third of the lease, 10 s by default): a cancel, fail fast's among them, stops the Playwright
 * under way within a second or so, whether or not its own reporter has a batch to send. The
 * answer's typed state is what counts, or the refusal of the agent's token (it ends with the run).
 * One question at a time; a server without the route (null) is not asked again.
 */
function watchForEnd(api: AgentApi, runId: number, agentId: number, current: Current, log: AgentLog): { stop(): void } {
  let asking = false;
  let timer: NodeJS.Timeout | null = null;
  const heard = (state: string) => {
    if (!current.ended) log.info({ test_run_id: runId, state }, 'the run has ended: stopping its Playwright');
    current.ended = state;
    if (current.shard) void killShard(current.shard);
  };
  const ask = async () => {
    if (asking || current.ended) return;
    asking = true;
    try {
      const run = await api.runState(runId, agentId);
      if (run === null && timer) clearInterval(timer);
      else if (run && isTerminalState(run.state)) heard(run.state);
    } catch (error) {
      const state = await api.endOf(runId, error);
      if (state) heard(state);
    } finally {
      asking = false;
    }
  };
  timer = setInterval(() => void ask(), END_CHECK_MS);
  return {
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}

/** What an agent says of its run's end: its state when it could be read. */
function ended(runId: number, state: string): AgentExit {
  return { code: 0, reason: `run ${runId} has ended${state === 'ended' ? '' : ` (${state})`}` };
}

/**
 * The agent's loop: lease, plan when asked to, run each unit, until the run has no work left or
 * ends. A unit that crashed here is added to `crashed`; a plan that failed ends the run `error`.
 */
async function leaseUntilDone(
  api: AgentApi,
  runId: number,
  joined: JoinAnswer,
  prepared: Prepared,
  current: Current,
  crashed: number[],
  log: AgentLog,
  signal?: AbortSignal,
): Promise<AgentExit> {
  for (;;) {
    if (signal?.aborted) return { code: 1, reason: 'stopped before the run had no work left: its units go to other agents' };
    const budget = Math.min(MAX_BUDGET_MS, BATCH_PER_START * (current.startMs ?? ASSUMED_START_MS));
    const lease = await api.lease(runId, joined.agent.id, budget);
    if (isTerminalState(lease.test_run.state)) return ended(runId, lease.test_run.state);
    if (lease.plan) {
      try {
        await plan(api, runId, joined, prepared, log);
      } catch (error) {
        const reason = (error as Error).message;
        await api.planFailed(runId, joined.agent.id, reason);
        return { code: 1, reason: `planning the run failed: ${reason}` };
      }
      continue;
    }
    const units = lease.units ?? (lease.unit ? [lease.unit] : []);
    if (units.length > 0) {
      Object.assign(current, { units: units.map((unit) => unit.unit), lost: false });
      crashed.push(...(await runUnits(api, runId, joined.agent.id, units, prepared, current, log)));
      current.units = [];
      if (current.ended) return ended(runId, current.ended);
      continue;
    }
    if (lease.test_run.planned && lease.remaining === 0) return { code: 0, reason: `run ${runId} has no work left` };
    // Units held by others (one may go silent, and the run's end is heard here), or the plan to come.
    await new Promise((resolve) => setTimeout(resolve, Math.min(500, (joined.lease_seconds * 1000) / 3)));
  }
}

/** The units' tests as this agent's Playwright can be told them (its planner's Playwright may be another). */
function unitsPick(units: Unit[], prepared: Prepared, listFile: string): TestPick {
  const lines = units.flatMap((unit) => unit.tests);
  if (lines.every(isLocation)) return { kind: 'locations', locations: [...new Set(lines)], projects: [...new Set(units.map((unit) => unit.runner_project))] };
  const version = playwrightVersion(prepared.dir, prepared.runner);
  if (!hasTestList(version))
    throw new ListingError(`the unit names its tests for --test-list, which this agent's Playwright ${version} does not have (1.56 and later)`);
  fs.writeFileSync(listFile, `${lines.join('\n')}\n`, { mode: 0o644 });
  return { kind: 'list', file: listFile };
}

/**
 * Runs a batch of units in one Playwright (its start paid once), each reported as the run's shard
 * of its number; returns those that crashed (their Playwright ended without the reporter ending
 * them), each reported to the server on its own: its first crash sends it to another agent.
 */
async function runUnits(api: AgentApi, runId: number, agentId: number, units: Unit[], prepared: Prepared, current: Current, log: AgentLog): Promise<number[]> {
  const first = units[0] as Unit;
  const scratch = path.join(prepared.runner.home, 'tmp', `run-${runId}-unit-${first.unit}-${process.pid}`);
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.mkdirSync(scratch, { mode: 0o700 });
  const marker = `agent-${process.pid}:${runId}:${first.unit}`;
  const crash = async (reason: string): Promise<number[]> => {
    for (const unit of units) await reportCrash(api, runId, agentId, unit, reason, log);
    return units.map((unit) => unit.unit);
  };
  try {
    let pick: TestPick;
    try {
      pick = unitsPick(units, prepared, path.join(scratch, 'tests.txt'));
    } catch (error) {
      if (!(error instanceof ListingError)) throw error;
      return await crash(error.message);
    }
    const timings = path.join(scratch, 'timings.json');
    const unitsFile = path.join(scratch, 'units.json');
    fs.writeFileSync(
      unitsFile,
      JSON.stringify({ units: units.map(({ unit, runner_project, file, test_ids }) => ({ unit, runner_project, file, test_ids })) } satisfies UnitsFile),
      { mode: 0o644 },
    );
    await handOver(prepared.runner, scratch);
    const estimate = units.every((unit) => unit.estimate_ms !== null) ? units.reduce((sum, unit) => sum + (unit.estimate_ms ?? 0), 0) : null;
    log.info(
      units.length === 1
        ? { unit: first.unit, file: first.file, runner_project: first.runner_project, tests: first.tests.length, estimate_ms: first.estimate_ms }
        : {
            units: units.map((unit) => unit.unit),
            files: units.map((unit) => unit.file),
            tests: units.reduce((n, unit) => n + unit.tests.length, 0),
            estimate_ms: estimate,
          },
      units.length === 1 ? 'running a unit' : 'running units in one Playwright',
    );
    const env = {
      ...prepared.env,
      PROCTOR_SHARD: String(first.unit),
      PROCTOR_EXECUTION: marker,
      PROCTOR_TIMINGS: timings,
      ...(units.length > 1 ? { PROCTOR_UNITS: unitsFile } : {}),
    };
    // A location also selects the tests written at the same place: the run's tags leave out those it does not select.
    const tags = pick.kind === 'locations' ? prepared.tags : [];
    // The run's Playwright arguments, but its --project: the units name their own.
    const args = shardArgs(prepared.runner, { projects: null, tags, tests: null }, 1, 1, pick, path.join(scratch, 'output'), withoutProjects(prepared.args));
    const started = Date.now();
    current.shard = spawnShard(prepared.dir, args, env, prepared.runner);
    const code = await current.shard.exited;
    current.startMs = measuredStart(timings, started, Date.now()) ?? current.startMs;
    log.info({ units: units.map((unit) => unit.unit), start_ms: current.startMs }, "the units' Playwright ended");
    // The reporter ended the shards before Playwright exited; those it could not end crashed.
    if (current.ended || current.lost) return [];
    const output = current.shard.output().trim().slice(-4000);
    // The reporter ends each unit's shard as Playwright ends: a unit still leased to this agent was not ended.
    const { state, units: held } = await api.heartbeat(runId, agentId);
    if (isTerminalState(state)) return [];
    const unended = units.filter((unit) => held.includes(unit.unit));
    for (const unit of unended)
      await reportCrash(api, runId, agentId, unit, `Playwright exited (code ${code}) without its reporter ending the unit\n${output}`, log);
    return unended.map((unit) => unit.unit);
  } finally {
    current.shard = null;
    killMarked(marker);
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * What a Playwright took beyond its tests: from its spawn to its first test, and from its last
 * test to its exit (its config, web server and workers' start, their teardown). Null when the
 * reporter wrote no timings; the whole time when no test ran.
 */
function measuredStart(file: string, spawned: number, exited: number): number | null {
  try {
    const { firstBegin, lastEnd } = JSON.parse(fs.readFileSync(file, 'utf8')) as { firstBegin: number | null; lastEnd: number | null };
    if (firstBegin === null || lastEnd === null) return exited - spawned;
    return Math.max(0, firstBegin - spawned) + Math.max(0, exited - lastEnd);
  } catch {
    return null;
  }
}

/** The server sends a unit's first crash to another agent, and fails it on its second. */
async function reportCrash(api: AgentApi, runId: number, agentId: number, unit: Unit, reason: string, log: AgentLog): Promise<void> {
  const retried = await api.crashed(runId, agentId, unit.unit, reason);
  log.warn({ unit: unit.unit, file: unit.file, retried }, retried ? 'the unit crashed: it goes to another agent' : 'the unit crashed again: the run fails it');
}
