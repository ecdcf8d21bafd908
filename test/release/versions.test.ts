import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { validateWorkflow } from '@action-validator/core';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { ROOT } from '../helpers/playwright.ts';
// @ts-expect-error: a plain script of the release workflow's, without types
import { section, versions } from '../../release/notes.mjs';

const run = promisify(execFile);
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const version = (JSON.parse(read('package.json')) as { version: string }).version;

interface Step {
  name?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
}
interface Workflow {
  on: { push: { tags: string[] } };
  jobs: Record<string, { needs?: string | string[]; steps: Step[]; permissions?: Record<string, string> }>;
}

describe('one version, one release', () => {
  it('when the packages, the root and the action are read, then they carry one version, and the server depends on that reporter and that badge', () => {
    expect(Object.values(versions() as Record<string, string>)).toEqual([version, version, version, version, version]);
    const serverDependencies = (JSON.parse(read('server/package.json')) as { dependencies: Record<string, string> }).dependencies;
    expect(serverDependencies['@proctor/reporter']).toBe(version);
    expect(serverDependencies['@proctor/badge']).toBe(version);
  });

  it("when CHANGELOG.md is read, then it keeps an Unreleased section above the version's dated one, which says what it brings", () => {
    const changelog = read('CHANGELOG.md');
    expect(changelog.indexOf('## [Unreleased]')).toBeGreaterThan(-1);
    expect(changelog.indexOf('## [Unreleased]')).toBeLessThan(changelog.indexOf(`## [${version}]`));
    expect(section(changelog, version)).toMatch(/### Added\n/);
    expect(section(changelog, '99.0.0')).toBeNull();
  });

  it('when the release notes are asked for a tag, then the tag of the version gets its section, and any other tag is refused in one line', async () => {
    const notes = await run(process.execPath, ['release/notes.mjs', `v${version}`], { cwd: ROOT });
    expect(notes.stdout.trim()).toBe(section(read('CHANGELOG.md'), version));
    const refused = await run(process.execPath, ['release/notes.mjs', 'v99.0.0'], { cwd: ROOT }).catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/^release notes: tag v99\.0\.0 is not the version of package\.json \(/) });
  });
});

describe('the release workflow', () => {
  const source = read('.github/workflows/release.yml');
  const workflow = YAML.parse(source) as Workflow;
  const steps = (job: string) => workflow.jobs[job]?.steps ?? [];

  it("when it is validated against GitHub's workflow schema, then it has no error", () => {
    expect(validateWorkflow(source).errors).toEqual([]);
    expect(validateWorkflow(source.replace('runs-on: ubuntu-24.04', 'runs-onn: ubuntu-24.04')).errors).not.toEqual([]);
  });

  it('when a tag v<version> is pushed, then CI runs in full before anything is published', () => {
    expect(workflow.on.push.tags).toEqual(['v*']);
    expect(steps('ci').some((step) => step.run === 'bash .ci/run')).toBe(true);
    expect(workflow.jobs.publish?.needs).toBe('ci');
  });

  it('when it publishes, then it runs the command the release check publishes with, with provenance, and releases the tarballs with the notes and moves the major tag', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['release:publish']).toBe('npm publish --workspace @proctor/badge --workspace @proctor/reporter --workspace @proctor/server');
    expect(steps('publish').map((step) => step.run ?? step.uses)).toEqual(
      expect.arrayContaining(['npm run release:publish -- --provenance', 'node release/notes.mjs "$GITHUB_REF_NAME" > "$RUNNER_TEMP/notes.md"']),
    );
    expect(workflow.jobs.publish?.permissions).toEqual({ contents: 'write', 'id-token': 'write' });
    expect(source).toMatch(/gh release create "\$GITHUB_REF_NAME" .*--notes-file "\$RUNNER_TEMP\/notes\.md" .*proctor-\*\.tgz/);
    expect(source).toContain('git push --force origin "refs/tags/$major"');
    expect(fs.readFileSync(path.join(ROOT, 'test/release/registry.test.ts'), 'utf8')).toContain("'run', '--silent', 'release:publish'");
  });
});
