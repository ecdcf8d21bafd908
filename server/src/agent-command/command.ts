// `proctor agent`'s flags and environment, read once into the agent's settings.
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { agentsRunKey, ciBuildUrl, ciPullRequest, ciRevision } from '@proctor/reporter/ci';
import { createLogger } from '../logger.ts';
import { type AgentSettings, runAgent } from './agent.ts';

const USAGE = `usage: proctor agent --url URL --key KEY (--run ID | --environment SLUG [--run-key K]) [--name N] [--workdir DIR] [--workspace DIR]
  URL and KEY also from PROCTOR_URL and PROCTOR_API_KEY; --run-key defaults to PROCTOR_RUN_KEY, else the CI build's id.`;

const FLAGS = ['url', 'key', 'run', 'environment', 'run-key', 'name', 'workdir', 'workspace'] as const;

export interface AgentFlags {
  url?: string;
  key?: string;
  run?: string;
  environment?: string;
  'run-key'?: string;
  name?: string;
  workdir?: string;
  workspace?: string;
}

/** What is wrong with the command line, in one line. */
export class AgentUsageError extends Error {}

export function agentSettings(flags: AgentFlags, env: NodeJS.ProcessEnv): AgentSettings {
  const url = (flags.url ?? env.PROCTOR_URL ?? '').replace(/\/+$/, '');
  const key = flags.key ?? env.PROCTOR_API_KEY ?? '';
  if (!/^https?:\/\/[^/]/.test(url)) throw new AgentUsageError("--url (or PROCTOR_URL) must be the server's http(s) URL");
  if (!key) throw new AgentUsageError('--key (or PROCTOR_API_KEY) must be a project key');
  if ((flags.run === undefined) === (flags.environment === undefined)) throw new AgentUsageError('give --run ID or --environment SLUG (one of them)');
  return {
    url,
    key,
    target: flags.run !== undefined ? { kind: 'run', runId: runIdFlag(flags.run) } : buildTarget(flags.environment as string, flags['run-key'], env),
    name: flags.name ?? `${os.hostname()}:${process.pid}`,
    workdir: path.resolve(flags.workdir ?? path.join(os.tmpdir(), 'proctor-agent')),
    workspace: flags.workspace ? path.resolve(flags.workspace) : null,
    runnerUser: env.PROCTOR_RUNNER_USER ?? 'nobody',
  };
}

function runIdFlag(value: string): number {
  if (!/^[1-9]\d{0,9}$/.test(value)) throw new AgentUsageError('--run must be a run id (a positive integer)');
  return Number(value);
}

/** The run of a CI build's agents: by --run-key, else by the build (its branch and commit as the CI names them). */
function buildTarget(environment: string, runKey: string | undefined, env: NodeJS.ProcessEnv): AgentSettings['target'] {
  const key = runKey ?? agentsRunKey(env);
  if (!key) throw new AgentUsageError('--run-key is needed outside CI (no CI build id found): the agents of one build share a run through it');
  // What the CI names; else the run takes the branch and commit of the first agent's checkout.
  return { kind: 'build', environment, runKey: key, ...ciRevision(env), buildUrl: ciBuildUrl(env), pullRequest: ciPullRequest(env) };
}

/** Runs the agent; its one-line reason goes to stdout (exit 0) or stderr. */
export async function agentCommand(flags: AgentFlags, env: NodeJS.ProcessEnv): Promise<number> {
  // SIGTERM or SIGINT (a CI's cancel, a server shutting down) stops the unit under way: its lease lapses to another agent.
  const stopping = new AbortController();
  process.once('SIGTERM', () => stopping.abort());
  process.once('SIGINT', () => stopping.abort());
  const settings = { ...agentSettings(flags, env), signal: stopping.signal };
  const exit = await runAgent(settings, createLogger(env.LOG_LEVEL ?? 'info', process.stderr));
  (exit.code === 0 ? process.stdout : process.stderr).write(`proctor agent: ${exit.reason.replace(/\s+/g, ' ').trim()}\n`);
  return exit.code;
}

/** `proctor agent …` from bin.ts: exits with the agent's status, 2 for a wrong command line. */
export function runAgentCli(argv: string[]): void {
  let flags: AgentFlags;
  try {
    flags = parseArgs({ args: argv, options: Object.fromEntries(FLAGS.map((flag) => [flag, { type: 'string' as const }])), strict: true }).values as AgentFlags;
    agentSettings(flags, process.env);
  } catch (error) {
    process.stderr.write(`proctor agent: ${(error as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  agentCommand(flags, process.env).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`proctor agent: ${(error as Error).message}\n`);
      process.exit(1);
    },
  );
}
