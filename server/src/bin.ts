#!/usr/bin/env node
// `proctor agent` runs on machines that only run tests, and `proctor mcp` beside an assistant: each
// loads its client alone, not the server.
if (process.argv[2] === 'agent') {
  const { runAgentCli } = await import('./agent-command/command.ts');
  runAgentCli(process.argv.slice(3));
} else if (process.argv[2] === 'mcp') {
  // The reporter package's relay, which proctor-ci runs too: one implementation, no SDK needed here.
  const { mcpCommand } = await import('@proctor/reporter/mcp');
  process.exitCode = await mcpCommand(process.argv.slice(3), process.env, 'proctor mcp');
} else {
  const { runCli } = await import('./cli.ts');
  runCli(process.argv.slice(2));
}
