import { spawn } from 'node:child_process';
import type { Settings } from './settings.ts';

/** How the agent ended: its exit code, and its last line (for people: nothing is read from it). */
export interface AgentResult {
  code: number | null;
  reason: string;
}

/**
 * Runs `proctor-ci agent` (or the server package's `proctor agent`) in the job's workspace on the workflow run's run until it has no work
 * left, with the action's URL and key in its environment, never on its command line. Its output
 * goes to the step's log.
 */
export function runAgent(settings: Settings, runId: number, log: (line: string) => void): Promise<AgentResult> {
  const [command, ...words] = settings.agent.command as [string, ...string[]];
  const args = [...words, 'agent', '--run', String(runId), '--workspace', settings.agent.workspace];
  if (settings.agent.name) args.push('--name', settings.agent.name);
  const child = spawn(command, args, {
    env: {
      ...process.env,
      PROCTOR_URL: settings.url,
      PROCTOR_API_KEY: settings.apiKey,
      ...(settings.projectId ? { PROCTOR_PROJECT_ID: settings.projectId } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let last = '';
  const lines = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      log(line);
      const reason = /^proctor(?:-ci)? agent: (.*)$/.exec(line);
      if (reason) last = reason[1] as string;
    }
  };
  child.stdout.on('data', lines);
  child.stderr.on('data', lines);
  return new Promise((resolve) => {
    child.on('error', (error) => resolve({ code: null, reason: `could not start ${command}: ${error.message}` }));
    child.on('close', (code) => resolve({ code, reason: last || `exited with code ${code}` }));
  });
}
