import { spawn } from 'node:child_process';
import type { Settings } from './settings.ts';

/** What the agent's last line said, and the run it served. */
export interface AgentResult {
  code: number | null;
  reason: string;
  runId: number | null;
}

/**
 * Runs `proctor agent` in the job's workspace until its run has no work left: it joins the
 * workflow run's run (the first agent of the workflow run makes it), with the action's URL and key
 * in its environment, never on its command line. Its output goes to the step's log.
 */
export function runAgent(settings: Settings, log: (line: string) => void): Promise<AgentResult> {
  const [command, ...words] = settings.agent.command as [string, ...string[]];
  const args = [...words, 'agent', '--environment', settings.environment, '--workspace', settings.agent.workspace];
  if (settings.agent.name) args.push('--name', settings.agent.name);
  const child = spawn(command, args, {
    env: { ...process.env, PROCTOR_URL: settings.url, PROCTOR_API_KEY: settings.apiKey, ...(settings.projectId ? { PROCTOR_PROJECT_ID: settings.projectId } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let last = '';
  const lines = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      log(line);
      if (line.startsWith('proctor agent: ')) last = line.slice('proctor agent: '.length);
    }
  };
  child.stdout.on('data', lines);
  child.stderr.on('data', lines);
  return new Promise((resolve) => {
    child.on('error', (error) => resolve({ code: null, reason: `could not start ${command}: ${error.message}`, runId: null }));
    child.on('close', (code) => {
      const runId = /\brun (\d+)\b/.exec(last)?.[1];
      resolve({ code, reason: last || `exited with code ${code}`, runId: runId ? Number(runId) : null });
    });
  });
}
