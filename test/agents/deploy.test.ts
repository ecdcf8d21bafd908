// The agents' GitHub Actions workflow and Kubernetes manifest as shipped: valid YAML with the fields
// each tool requires, and an agent command line that `proctor agent` accepts.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type AgentFlags, agentSettings } from '../../reporter/src/cli/agent.ts';

const DEPLOY = path.resolve(import.meta.dirname, '../../deploy/agents');
const read = (file: string) => parse(fs.readFileSync(path.join(DEPLOY, file), 'utf8'), { strict: true, uniqueKeys: true });

/** `proctor agent`'s flags in a command line, read as the CLI reads them. */
function agentFlags(words: string[]): AgentFlags {
  const at = words.indexOf('agent');
  expect(at, `no agent command in ${words.join(' ')}`).toBeGreaterThan(-1);
  const flags = ['url', 'key', 'run', 'environment', 'run-key', 'name', 'workdir', 'workspace'];
  return parseArgs({ args: words.slice(at + 1), options: Object.fromEntries(flags.map((flag) => [flag, { type: 'string' as const }])), strict: true })
    .values as AgentFlags;
}

/** A shell command's words, double quotes and GitHub's expressions kept whole. */
function words(command: string): string[] {
  return (command.match(/"[^"]*"|\S+/g) ?? []).map((word) => word.replace(/^"|"$/g, ''));
}

describe('the agents as shipped', () => {
  it('when the GitHub Actions workflow is read, then its jobs have what Actions requires, the matrix runs several agents of one run, and the result job reads that run', () => {
    const workflow = read('github-actions.yml');
    expect(workflow.on).toBeTruthy();
    expect(Object.keys(workflow.jobs)).toEqual(['agents', 'result']);
    for (const [id, job] of Object.entries<Record<string, unknown>>(workflow.jobs)) {
      expect(id).toMatch(/^[A-Za-z_][A-Za-z0-9_-]*$/);
      expect(typeof job['runs-on'], id).toBe('string');
      const steps = job.steps as Record<string, unknown>[];
      expect(steps.length).toBeGreaterThan(0);
      for (const step of steps) expect(Object.hasOwn(step, 'uses') !== Object.hasOwn(step, 'run'), JSON.stringify(step)).toBe(true);
    }
    const agents = workflow.jobs.agents;
    expect(agents.strategy.matrix.agent.length).toBeGreaterThan(1);
    const agentStep = agents.steps.find((step: { run?: string }) => step.run?.includes(' agent '));
    expect(Object.keys(agentStep.env).sort()).toEqual(['PROCTOR_API_KEY', 'PROCTOR_URL']);
    expect(agentStep.env.PROCTOR_API_KEY).toMatch(/secrets\./);
    // The matrix's jobs share the workflow run's id, and so one run; the result job asks for the same one.
    const env = { PROCTOR_URL: 'https://proctor.example.com', PROCTOR_API_KEY: 'prc_p_x', GITHUB_RUN_ID: '77', GITHUB_RUN_ATTEMPT: '2' };
    const settings = agentSettings(agentFlags(words(agentStep.run)), env);
    expect(settings.target).toMatchObject({ kind: 'build', environment: 'ci', runKey: 'agents-github-77-2' });
    expect(settings.workspace).toBe(process.cwd());
    const resultScript = workflow.jobs.result.steps[0].run as string;
    expect(resultScript).toContain('"run_key\\": \\"agents-github-$GITHUB_RUN_ID-$GITHUB_RUN_ATTEMPT\\"');
    expect(resultScript).toContain('/api/test-runs/agent-run');
    expect(workflow.jobs.result.needs).toBe('agents');
  });

  it('when the Kubernetes manifest is read, then it is an indexed Job whose pods share one run key and run the agent', () => {
    const job = read('kubernetes.yml');
    expect(job).toMatchObject({ apiVersion: 'batch/v1', kind: 'Job', spec: { completionMode: 'Indexed' } });
    expect(job.metadata.name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    expect(job.spec.completions).toBeGreaterThan(1);
    expect(job.spec.parallelism).toBe(job.spec.completions);
    const pod = job.spec.template.spec;
    expect(['Never', 'OnFailure']).toContain(pod.restartPolicy);
    expect(pod.containers).toHaveLength(1);
    const [container] = pod.containers;
    expect(container.name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    expect(typeof container.image).toBe('string');
    for (const variable of container.env) {
      expect(variable.name).toMatch(/^[A-Z_][A-Z0-9_]*$/);
      expect(Object.hasOwn(variable, 'value') !== Object.hasOwn(variable, 'valueFrom')).toBe(true);
    }
    const byName = Object.fromEntries(container.env.map((variable: { name: string }) => [variable.name, variable]));
    expect(byName.PROCTOR_API_KEY.valueFrom.secretKeyRef).toEqual({ name: 'proctor', key: 'api-key' });
    expect(byName.PROCTOR_RUN_KEY.valueFrom.fieldRef.fieldPath).toBe("metadata.labels['batch.kubernetes.io/controller-uid']");
    const mounts = container.volumeMounts.map((mount: { name: string }) => mount.name);
    expect(pod.volumes.map((volume: { name: string }) => volume.name)).toEqual(mounts);
    const settings = agentSettings(agentFlags(container.command), {
      PROCTOR_URL: byName.PROCTOR_URL.value,
      PROCTOR_API_KEY: 'prc_p_x',
      PROCTOR_RUN_KEY: 'a-job-uid',
    });
    expect(settings.target).toMatchObject({ kind: 'build', environment: 'nightly', runKey: 'a-job-uid' });
    expect(settings.workdir).toBe('/work');
  });
});
