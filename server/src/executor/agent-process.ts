import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';

/** The `proctor` command beside this module: its source under tsx, or the compiled package. */
const BIN = fileURLToPath(new URL(`../bin${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url));

export interface AgentProcess {
  /** The agent's exit code, and its last line for people (what the run's error says). */
  exited: Promise<{ code: number | null; reason: string }>;
  /** Stops it (the server shutting down): its unit goes back to the queue. */
  stop(): void;
}

/**
 * `proctor agent --run ID` as a process of its own: the server serves a run of agents as any agent
 * does, over the API, with the run's key in its environment, and imports none of the agent.
 */
export function spawnAgent(input: { url: string; key: string; runId: number; name: string; workdir: string; runnerUser: string }, log: Logger): AgentProcess {
  const loader = BIN.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = spawn(
    process.execPath,
    [...loader, BIN, 'agent', '--url', input.url, '--run', String(input.runId), '--name', input.name, '--workdir', input.workdir],
    {
      env: { ...process.env, PROCTOR_API_KEY: input.key, PROCTOR_RUNNER_USER: input.runnerUser },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let last = '';
  const lines = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      if (line.startsWith('proctor agent: ')) last = line.slice('proctor agent: '.length);
      else log.info({ agent: line });
    }
  };
  child.stdout.on('data', lines);
  child.stderr.on('data', lines);
  const exited = new Promise<{ code: number | null; reason: string }>((resolve) => {
    child.on('error', (error) => resolve({ code: null, reason: `the agent could not start: ${error.message}` }));
    child.on('close', (code) => resolve({ code, reason: last || `the agent exited with code ${code}` }));
  });
  return { exited, stop: () => child.kill('SIGTERM') };
}
