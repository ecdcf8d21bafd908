export interface Settings {
  url: string;
  apiKey: string;
  projectId: string | null;
  environment: string;
  branch: string | null;
  build: { url?: string; branch?: string; commit?: string; repo?: string; version?: string } | null;
  tags: string[];
  testCaseIds: string[];
  totalShards: number | null;
  /** Fail fast: the run stops after this many failures; null: the environment's limit. */
  maxFailures: number | null;
  /** Only the tests a change can break (`affected`): a trigger's; mode agent refuses it. */
  affected: boolean;
  metadata: Record<string, string | number> | null;
  envOverrides: { name: string; value: string }[];
  sendNotifications: boolean;
  wait: boolean;
  timeoutMs: number;
  pollMs: number;
  failOnFlaky: boolean;
  /** `agent`: this job runs `proctor-ci agent` in its workspace, one of the agents of the workflow run's run. */
  mode: 'trigger' | 'agent';
  agent: { command: string[]; name: string | null; workspace: string };
}

export class SettingsError extends Error {}

/** The reporter package's proctor-ci (its one bin), of the version this action is: Node alone, nothing of the server installed. */
export const DEFAULT_AGENT_COMMAND = 'npx --yes @proctor/reporter@0.1.0';

type Input = (name: string) => string;

/** An empty input takes the default action.yml gives it (a runner passes defaults; not every caller does). */
function boolean(input: Input, name: string, fallback: boolean): boolean {
  const value = input(name).trim().toLowerCase();
  if (!value) return fallback;
  if (['true', 'yes', '1'].includes(value)) return true;
  if (['false', 'no', '0'].includes(value)) return false;
  throw new SettingsError(`input ${name} must be true or false, not "${value}"`);
}

function number(input: Input, name: string, min: number): number | null {
  const raw = input(name).trim();
  if (!raw) return null;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new SettingsError(`input ${name} must be a number of at least ${min}, not "${raw}"`);
  return value;
}

function list(value: string): string[] {
  return value
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter(Boolean);
}

function metadata(raw: string): Record<string, string | number> | null {
  if (!raw.trim()) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new SettingsError('input metadata must be a JSON object');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new SettingsError('input metadata must be a JSON object');
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value !== 'string' && typeof value !== 'number') throw new SettingsError(`input metadata: "${key}" must be a string or a number`);
  }
  return parsed as Record<string, string | number>;
}

function envOverrides(raw: string): { name: string; value: string }[] {
  return raw
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const at = line.indexOf('=');
      const name = at > 0 ? line.slice(0, at).trim() : '';
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new SettingsError(`input env-overrides: "${line.split('=')[0]}" is not NAME=value`);
      return { name, value: line.slice(at + 1) };
    });
}

/** The command that runs the agent (`proctor-ci`, or the server package's `proctor`): its words, split on spaces. */
function agentCommand(raw: string): string[] {
  const words = raw.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) throw new SettingsError('input agent-command must name the command that runs proctor-ci (or proctor)');
  return words;
}

function mode(raw: string): Settings['mode'] {
  const value = raw.trim() || 'trigger';
  if (value !== 'trigger' && value !== 'agent') throw new SettingsError(`input mode must be trigger or agent, not "${value}"`);
  return value;
}

/**
 * Every input, read and checked once. `workflowCommit` is the build's commit when a build is given
 * without one; `workspace` is where an agent runs the suite (the job's checkout).
 */
export function parseSettings(input: Input, workflowCommit: string | null, workspace: string = process.cwd()): Settings {
  const required = (name: string) => {
    const value = input(name).trim();
    if (!value) throw new SettingsError(`input ${name} is required`);
    return value;
  };
  const url = required('url').replace(/\/+$/, '');
  if (!/^https?:\/\//.test(url)) throw new SettingsError(`input url must start with http:// or https://, not "${url}"`);
  const buildFields = {
    url: input('build-url').trim(),
    branch: input('build-branch').trim(),
    commit: input('build-commit').trim(),
    repo: input('build-repo').trim(),
    version: input('build-version').trim(),
  };
  const given = Object.fromEntries(Object.entries(buildFields).filter(([, value]) => value));
  const build = Object.keys(given).length > 0 ? { commit: workflowCommit ?? undefined, ...given } : null;
  const branch = input('branch').trim() || null;
  if (branch && build) throw new SettingsError('input branch cannot be combined with build-* inputs');
  const totalShards = number(input, 'total-shards', 1);
  if (totalShards !== null && !Number.isInteger(totalShards)) throw new SettingsError('input total-shards must be a whole number');
  const maxFailures = number(input, 'max-failures', 1);
  if (maxFailures !== null && (!Number.isInteger(maxFailures) || maxFailures > 100_000))
    throw new SettingsError('input max-failures must be a whole number from 1 to 100000');
  const affected = boolean(input, 'affected', false);
  if (affected && mode(input('mode')) === 'agent')
    throw new SettingsError('input affected is for mode trigger: a run of agents runs every test its first agent lists');
  return {
    url,
    apiKey: required('api-key'),
    projectId: input('project-id').trim() || null,
    environment: required('environment'),
    branch,
    build,
    tags: list(input('tags')),
    testCaseIds: list(input('test-case-ids')),
    totalShards,
    maxFailures,
    affected,
    metadata: metadata(input('metadata')),
    envOverrides: envOverrides(input('env-overrides')),
    sendNotifications: boolean(input, 'send-notifications', true),
    wait: boolean(input, 'wait', true),
    timeoutMs: (number(input, 'timeout-minutes', 0.01) ?? 60) * 60_000,
    pollMs: Math.max(1, number(input, 'poll-interval-seconds', 1) ?? 10) * 1000,
    failOnFlaky: boolean(input, 'fail-on-flaky', false),
    mode: mode(input('mode')),
    agent: { command: agentCommand(input('agent-command') || DEFAULT_AGENT_COMMAND), name: input('agent-name').trim() || null, workspace },
  };
}
