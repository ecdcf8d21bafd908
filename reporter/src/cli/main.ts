#!/usr/bin/env node
// `proctor-ci`: the commands a CI machine (or an assistant beside a developer) runs against a
// Proctor server, with Node alone (this package has no dependencies and ships built).
import { agentCommand } from './agent.ts';
import { mcpCommand } from './mcp.ts';
import { orderCommand } from './order.ts';
import { runCommand } from './run.ts';
import { snapshotsCommand } from './snapshots.ts';
import { uploadCommand } from './upload.ts';

const USAGE = `usage: proctor-ci <command>
  run --environment SLUG …            trigger a run of the environment's suite and wait for its end (run --help)
  upload FILE… --environment SLUG     upload any runner's reports (JUnit XML, TRX, NUnit, xUnit.net, JSON…) as a run's shard (upload --help)
  agent --environment SLUG | --run ID  run units of a run of agents on this machine until it has no work left (agent --help)
  order --environment SLUG            write this build's test order, likely failures first, for a CI that runs Playwright itself (order --help)
  mcp [--url URL] [--key KEY]          Proctor's MCP server on stdio, for an assistant that starts a process (mcp --help)
  snapshots pull RUN_ID [--dir DIR]    write the screenshots approved in a run's visual review into a checkout (snapshots --help)
  --help, --version`;

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (command === 'run') return runCommand(args, process.env);
  // Exits at once: a unit's leftovers (a child's pipe) must not hold the process after its last line.
  if (command === 'agent') process.exit(await agentCommand(args, process.env));
  if (command === 'mcp') {
    process.exitCode = await mcpCommand(args, process.env);
    return;
  }
  if (command === 'order') {
    process.exitCode = await orderCommand(args, process.env);
    return;
  }
  if (command === 'snapshots') {
    process.exitCode = await snapshotsCommand(args, process.env);
    return;
  }
  if (command === 'upload') {
    process.exitCode = await uploadCommand(args, process.env);
    return;
  }
  if (command === '--version') {
    const { createRequire } = await import('node:module');
    process.stdout.write(`${(createRequire(import.meta.url)('../../package.json') as { version: string }).version}\n`);
    return;
  }
  if (command === '--help' || command === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  process.stderr.write(`proctor-ci: unknown command "${command}"\n${USAGE}\n`);
  process.exitCode = 2;
}

await main(process.argv.slice(2));
