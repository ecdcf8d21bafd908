#!/usr/bin/env node
// `proctor agent` runs on machines that only run tests, and `proctor mcp` beside an assistant: each
// loads its client alone, not the server.
if (process.argv[2] === 'agent') {
  const { runAgentCli } = await import('./agent-command/command.ts');
  runAgentCli(process.argv.slice(3));
} else if (process.argv[2] === 'mcp') {
  const { runMcpCli } = await import('./mcp-command/command.ts');
  runMcpCli(process.argv.slice(3));
} else {
  const { runCli } = await import('./cli.ts');
  runCli(process.argv.slice(2));
}
