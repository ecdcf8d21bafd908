import fs from 'node:fs';
import path from 'node:path';
import { parseEnvFile } from './repository.ts';

/** The server's own settings never reach the tests. */
const SERVER_ONLY = /^(DATABASE_URL|PROCTOR_.*|PG(HOST|PORT|USER|PASSWORD|DATABASE)|LOG_LEVEL|PORT|HOST|PUBLIC_URL)$/;

export interface RunEnvironmentInput {
  base: NodeJS.ProcessEnv;
  checkoutDir: string;
  envFiles: string[];
  overrides: { name: string; value: string }[];
  buildUrl: string | null;
  reporter: { url: string; apiKey: string; runId: number; commit: string | null; branch: string | null };
}

/**
 * The shards' environment, later entries winning: the server's (less its own settings), CI=1, the
 * build's URL as BASE_URL and PLAYWRIGHT_BASE_URL, the environment's env files in order, the run's
 * overrides, and last the reporter's settings.
 */
export function runEnvironment(input: RunEnvironmentInput): { env: NodeJS.ProcessEnv; missingFiles: string[] } {
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(input.base).filter(([name]) => !SERVER_ONLY.test(name)));
  env.CI = '1';
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
  for (const { name, value } of input.overrides) env[name] = value;
  Object.assign(env, {
    PROCTOR_URL: input.reporter.url,
    PROCTOR_API_KEY: input.reporter.apiKey,
    PROCTOR_RUN_ID: String(input.reporter.runId),
    ...(input.reporter.commit ? { PROCTOR_COMMIT: input.reporter.commit } : {}),
    ...(input.reporter.branch ? { PROCTOR_BRANCH: input.reporter.branch } : {}),
    FORCE_COLOR: '0',
  });
  return { env, missingFiles };
}
