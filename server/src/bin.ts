#!/usr/bin/env node
import module from 'node:module';

// Node 22+ keeps the compiled code of the modules a command loads (zod, postgres.js, PGlite's
// JavaScript) between runs: a command then starts sooner. Node 20 lacks it and loses nothing.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
// `proctor agent` runs on machines that only run tests, and `proctor mcp` beside an assistant: each
// loads its client alone, not the server.
if (process.argv[2] === 'agent') {
  // The reporter package's agent, which proctor-ci runs too: one implementation on every machine.
  const { agentCommand } = await import('@proctor/reporter/agent');
  // Exits at once: a unit's leftovers (a child's pipe) must not hold the process after its last line.
  process.exit(await agentCommand(process.argv.slice(3), process.env, 'proctor agent'));
} else if (process.argv[2] === 'mcp') {
  // The reporter package's relay, which proctor-ci runs too: one implementation, no SDK needed here.
  const { mcpCommand } = await import('@proctor/reporter/mcp');
  process.exitCode = await mcpCommand(process.argv.slice(3), process.env, 'proctor mcp');
} else {
  const { runCli } = await import('./cli.ts');
  runCli(process.argv.slice(2));
}
