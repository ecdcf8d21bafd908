import fs from 'node:fs';
import path from 'node:path';
import { refusedOverride } from './overrides.ts';
import { parseEnvFile } from './repository.ts';

export interface RunEnvironmentInput {
  /** The runner's clean environment (sandbox.ts), never the server's. */
  base: NodeJS.ProcessEnv;
  checkoutDir: string;
  envFiles: string[];
  overrides: { name: string; value: string }[];
  buildUrl: string | null;
  reporter: { url: string; apiKey: string; runId: number; commit: string | null; branch: string | null };
}

/**
 * The shards' environment, later entries winning: the runner's clean one, the build's URL as
 * BASE_URL and PLAYWRIGHT_BASE_URL, the environment's env files in order, the run's overrides, and
 * last the reporter's settings. `refused`: overrides stored before they were refused at the edge.
 */
export function runEnvironment(input: RunEnvironmentInput): { env: NodeJS.ProcessEnv; missingFiles: string[]; refused: string[] } {
  const env: NodeJS.ProcessEnv = { ...input.base };
  if (input.buildUrl) {
    env.BASE_URL = input.buildUrl;
    env.PLAYWRIGHT_BASE_URL = input.buildUrl;
  }
  const missingFiles: string[] = [];
  for (const file of input.envFiles) {
    const full = path.resolve(input.checkoutDir, file);
    if (!full.startsWith(path.resolve(input.checkoutDir) + path.sep) || !fs.existsSync(full)) {
      missingFiles.push(file);
      continue;
    }
    Object.assign(env, parseEnvFile(fs.readFileSync(full, 'utf8')));
  }
  const refused: string[] = [];
  for (const { name, value } of input.overrides) {
    if (refusedOverride(name)) refused.push(name);
    else env[name] = value;
  }
  Object.assign(env, {
    PROCTOR_URL: input.reporter.url,
    PROCTOR_API_KEY: input.reporter.apiKey,
    PROCTOR_RUN_ID: String(input.reporter.runId),
    ...(input.reporter.commit ? { PROCTOR_COMMIT: input.reporter.commit } : {}),
    ...(input.reporter.branch ? { PROCTOR_BRANCH: input.reporter.branch } : {}),
    FORCE_COLOR: '0',
  });
  return { env, missingFiles, refused };
}
