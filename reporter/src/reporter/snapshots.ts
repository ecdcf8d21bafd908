import fs from 'node:fs';
import path from 'node:path';
import type { FullConfig } from '@playwright/test/reporter';
import type { WireSnapshotLayout } from '../api/wire.ts';

// Where the suite's Playwright keeps its screenshot baselines, for the server to write approved
// ones where Playwright will look. A project's testDir and snapshotDir are public; its path
// templates (`snapshotPathTemplate`, `expect.toHaveScreenshot.pathTemplate`) are not on the
// reporter's config, but on the config Playwright resolved, which the reporter's config holds under
// a symbol of Playwright's (1.42 to today). Without it the templates are unknown: null, which the
// server takes for Playwright's default, and a project that set its own must say it another way.

type InternalProject = { project?: unknown; snapshotPathTemplate?: unknown; expect?: { toHaveScreenshot?: { pathTemplate?: unknown } } };

function internalProjects(config: FullConfig): InternalProject[] {
  const symbol = Object.getOwnPropertySymbols(config).find((s) => s.description === 'configInternalSymbol');
  const internal = symbol ? (config as unknown as Record<symbol, { projects?: unknown }>)[symbol] : undefined;
  return Array.isArray(internal?.projects) ? (internal.projects as InternalProject[]) : [];
}

/** The folder holding `.git` (a folder, or a worktree's file) at or above `dir`; null when none. */
function repositoryRoot(dir: string): string | null {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    if (fs.existsSync(path.join(at, '.git'))) return at;
    if (path.dirname(at) === at) return null;
  }
}

const posix = (file: string) => file.split(path.sep).join('/') || '.';

export function snapshotLayout(config: FullConfig, configDir: string): WireSnapshotLayout {
  const internal = internalProjects(config);
  const root = repositoryRoot(configDir);
  return {
    platform: process.platform,
    config_dir: root ? posix(path.relative(root, configDir)) : '.',
    projects: config.projects.map((project, index) => {
      const own = internal.find((p) => p.project === project) ?? internal[index];
      const template = own?.expect?.toHaveScreenshot?.pathTemplate ?? own?.snapshotPathTemplate;
      return {
        name: project.name,
        test_dir: posix(path.relative(configDir, project.testDir)),
        snapshot_dir: posix(path.relative(configDir, project.snapshotDir)),
        path_template: typeof template === 'string' ? template : null,
      };
    }),
  };
}
