// `proctor-ci agent`: runs units of a run of agents on this machine (agent/agent.ts), with its flags
// and environment read once into the agent's settings.
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type AgentSettings, runAgent } from '../agent/agent.ts';
import { agentLog, isLogLevel, LOG_FORMATS, type LogFormat, logFormatFor } from '../agent/log.ts';
import { agentsRunKey, ciBuildUrl, ciPullRequest, ciRevision } from '../runs/ci.ts';
import { playwrightArgsProblem } from '../toolchain/playwright-args.ts';
import { openCommand, UsageError } from './exit.ts';

/** The agents' API as the agent reads it, which the server checks against its schemas. */
export type { AgentRunBody, Checkout, JoinAnswer, LeaseAnswer, PlannedUnit, RunStateAnswer, Unit } from '../agent/client.ts';

export const AGENT_USAGE = `usage: proctor-ci agent (--run ID | --environment SLUG [--run-key K] [--max-failures N]) [--url URL] [--key KEY] [--name N] [--workdir DIR] [--workspace DIR [--install]]
                        [--agents N] [--share-web-server] [--log-format text|json] [-- PLAYWRIGHT_ARGUMENTS]
  Runs units of a run of agents here until the run has no work left: the first agent of a CI build
  makes its run (--environment), plans its units, and every agent leases them one at a time.
  URL and KEY also from PROCTOR_URL and PROCTOR_API_KEY; --run-key defaults to PROCTOR_RUN_KEY, else
  the CI build's id. A --workspace is used as it is, its dependencies installed already; --install
  lets the agent run its package manager's install there. Suites run as PROCTOR_RUNNER_USER (default nobody) when the agent is root.
  Units get PROCTOR_AGENT_INDEX (join order, 0 first) and PROCTOR_AGENT_COUNT (--agents N, else the agents
  joined so far); --share-web-server starts the config's webServer once for the agents of this machine.
  --max-failures N (or PROCTOR_MAX_FAILURES): fail fast, the run is cancelled once N tests failed that no
  snooze or quarantine covers, and every agent stops its Playwright; the first agent's makes the run.
  Arguments after -- go to every unit's Playwright (--config, --project, --workers, --grep, ...); test file
  filters, --shard, --test-list, --list, --last-failed, --only-changed, --ui, --debug, --reporter, --output
  and --repeat-each are refused.
  Log lines on stderr at LOG_LEVEL (info; warn, error, silent): text (time, level, message, fields) on a
  terminal, JSON lines otherwise; --log-format picks one.`;

const FLAGS = ['url', 'key', 'run', 'environment', 'run-key', 'name', 'workdir', 'workspace', 'agents', 'log-format', 'max-failures'] as const;

export interface AgentFlags {
  url?: string;
  key?: string;
  run?: string;
  environment?: string;
  'run-key'?: string;
  name?: string;
  workdir?: string;
  workspace?: string;
  install?: boolean;
  agents?: string;
  'share-web-server'?: boolean;
  'log-format'?: string;
  'max-failures'?: string;
  /** What follows `--`: every unit's Playwright arguments. */
  playwright?: string[];
}

export function agentSettings(flags: AgentFlags, env: NodeJS.ProcessEnv): AgentSettings {
  const url = (flags.url ?? env.PROCTOR_URL ?? '').replace(/\/+$/, '');
  const key = flags.key ?? env.PROCTOR_API_KEY ?? '';
  if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError("--url (or PROCTOR_URL) must be the server's http(s) URL");
  if (!key) throw new UsageError('--key (or PROCTOR_API_KEY) must be a project key');
  if (flags.install && !flags.workspace) throw new UsageError('--install is for a --workspace: a checkout of the agent installs its dependencies itself');
  if ((flags.run === undefined) === (flags.environment === undefined)) throw new UsageError('give --run ID or --environment SLUG (one of them)');
  if (flags.agents !== undefined && !/^[1-9]\d{0,3}$/.test(flags.agents)) throw new UsageError('--agents must be the number of agents expected (1 to 9999)');
  const format = flags['log-format'];
  if (format !== undefined && !(LOG_FORMATS as readonly string[]).includes(format)) throw new UsageError('--log-format must be text or json');
  const maxFailures = flags['max-failures'] ?? env.PROCTOR_MAX_FAILURES;
  if (maxFailures !== undefined && !/^[1-9]\d{0,4}$|^100000$/.test(maxFailures))
    throw new UsageError('--max-failures (or PROCTOR_MAX_FAILURES) must be a whole number from 1 to 100000');
  if (flags['max-failures'] !== undefined && flags.run !== undefined)
    throw new UsageError('--max-failures is for the run the agents make (--environment): a run given by --run has its limit already');
  const problem = playwrightArgsProblem(flags.playwright ?? []);
  if (problem) throw new UsageError(`the Playwright arguments after --: ${problem}`);
  return {
    url,
    key,
    target:
      flags.run !== undefined
        ? { kind: 'run', runId: runIdFlag(flags.run) }
        : { ...buildTarget(flags.environment as string, flags['run-key'], env), maxFailures: maxFailures !== undefined ? Number(maxFailures) : null },
    name: flags.name ?? `${os.hostname()}:${process.pid}`,
    workdir: path.resolve(flags.workdir ?? path.join(os.tmpdir(), 'proctor-agent')),
    workspace: flags.workspace ? path.resolve(flags.workspace) : null,
    install: flags.install === true,
    runnerUser: env.PROCTOR_RUNNER_USER ?? 'nobody',
    playwrightArgs: flags.playwright ?? [],
    agents: flags.agents !== undefined ? Number(flags.agents) : null,
    shareWebServer: flags['share-web-server'] === true,
    logFormat: (format as LogFormat | undefined) ?? null,
  };
}

function runIdFlag(value: string): number {
  if (!/^[1-9]\d{0,9}$/.test(value)) throw new UsageError('--run must be a run id (a positive integer)');
  return Number(value);
}

/** The run of a CI build's agents: by --run-key, else by the build (its branch and commit as the CI names them). */
function buildTarget(
  environment: string,
  runKey: string | undefined,
  env: NodeJS.ProcessEnv,
): Omit<Extract<AgentSettings['target'], { kind: 'build' }>, 'maxFailures'> {
  const key = runKey ?? agentsRunKey(env);
  if (!key) throw new UsageError('--run-key is needed outside CI (no CI build id found): the agents of one build share a run through it');
  // What the CI names; else the run takes the branch and commit of the first agent's checkout.
  return { kind: 'build', environment, runKey: key, ...ciRevision(env), buildUrl: ciBuildUrl(env), pullRequest: ciPullRequest(env) };
}

/** Runs the agent; its one-line reason goes to stdout (exit 0) or stderr (exit 1). */
async function runToEnd(settings: AgentSettings, env: NodeJS.ProcessEnv, name: string): Promise<number> {
  // SIGTERM or SIGINT (a CI's cancel, a server shutting down) stops the unit under way: its lease lapses to another agent.
  const stopping = new AbortController();
  process.once('SIGTERM', () => stopping.abort());
  process.once('SIGINT', () => stopping.abort());
  const level = env.LOG_LEVEL ?? 'info';
  // A person's terminal reads text; a CI's log or the server's executor, which read stderr through a pipe, JSON.
  const log = agentLog(logFormatFor(settings.logFormat ?? undefined, process.stderr.isTTY === true), isLogLevel(level) ? level : 'info', process.stderr);
  const exit = await runAgent({ ...settings, signal: stopping.signal }, log);
  (exit.code === 0 ? process.stdout : process.stderr).write(`${name}: ${exit.reason.replace(/\s+/g, ' ').trim()}\n`);
  return exit.code;
}

/**
 * `proctor-ci agent …` (and the server package's `proctor agent`, which runs this): the agent's exit
 * code, 2 for a wrong command line. The last line, `<name>: <reason>`, is what the server's
 * executor shows as the reason of an agent it started.
 */
export async function agentCommand(args: string[], env: NodeJS.ProcessEnv, name = 'proctor-ci agent'): Promise<number> {
  const opened = openCommand(
    args,
    AGENT_USAGE,
    () => agentSettings(flagsOf(args), env),
    (message) => process.stderr.write(`${name}: ${message}\n`),
  );
  if ('exit' in opened) return opened.exit;
  try {
    return await runToEnd(opened.settings, env, name);
  } catch (error) {
    process.stderr.write(`${name}: ${(error as Error).message}\n`);
    return 1;
  }
}

function flagsOf(args: string[]): AgentFlags {
  const split = args.indexOf('--');
  const own = split === -1 ? args : args.slice(0, split);
  try {
    const flags = parseArgs({
      args: own,
      options: {
        ...Object.fromEntries(FLAGS.map((flag) => [flag, { type: 'string' as const }])),
        install: { type: 'boolean' as const },
        'share-web-server': { type: 'boolean' as const },
      },
      strict: true,
    }).values as AgentFlags;
    return split === -1 ? flags : { ...flags, playwright: args.slice(split + 1) };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
