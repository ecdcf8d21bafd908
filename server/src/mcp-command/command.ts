// `proctor mcp`: Proctor's MCP server for an assistant that starts a local process. It speaks MCP on
// stdio and hands every message to the server's /mcp over HTTP with the key, and every answer
// back: the same tools, roles and bounds as the server's, and no database or secret here but the key.
import { parseArgs } from 'node:util';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const USAGE = `usage: proctor mcp [--url URL] [--key KEY] [--project ID]
  URL, KEY and ID also from PROCTOR_URL, PROCTOR_API_KEY and PROCTOR_PROJECT_ID (the project of a personal key that belongs to several).`;

export class McpUsageError extends Error {}

export interface McpSettings {
  url: string;
  key: string;
  projectId: string | null;
}

export function mcpSettings(flags: { url?: string; key?: string; project?: string }, env: NodeJS.ProcessEnv): McpSettings {
  const url = (flags.url ?? env.PROCTOR_URL ?? '').replace(/\/+$/, '');
  const key = flags.key ?? env.PROCTOR_API_KEY ?? '';
  const projectId = flags.project ?? env.PROCTOR_PROJECT_ID ?? null;
  if (!/^https?:\/\/[^/]/.test(url)) throw new McpUsageError("--url (or PROCTOR_URL) must be the server's http(s) URL");
  if (!key) throw new McpUsageError('--key (or PROCTOR_API_KEY) must be a personal or project key');
  if (projectId !== null && !/^\d{1,10}$/.test(projectId)) throw new McpUsageError('--project (or PROCTOR_PROJECT_ID) must be a project id');
  return { url, key, projectId };
}

/** Relays MCP between stdio and the server until the assistant closes stdin; resolves then. */
export async function relay(settings: McpSettings): Promise<void> {
  const local = new StdioServerTransport();
  const remote = new StreamableHTTPClientTransport(new URL(`${settings.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${settings.key}`, ...(settings.projectId ? { 'x-project-id': settings.projectId } : {}) } },
  });
  const closed = new Promise<void>((resolve) => {
    local.onclose = () => resolve();
  });
  local.onmessage = (message) => {
    remote.send(message).catch((error: Error) => {
      // A request the server could not take is answered with an error, so the assistant does not wait for ever.
      if ('id' in message && 'method' in message) {
        void local.send({
          jsonrpc: '2.0',
          id: message.id,
          error: { code: -32603, message: `Proctor at ${settings.url} could not be reached: ${error.message}` },
        });
      }
    });
  };
  remote.onmessage = (message) => void local.send(message);
  remote.onerror = (error) => process.stderr.write(`proctor mcp: ${error.message}\n`);
  await remote.start();
  await local.start();
  await closed;
  await remote.close();
}

export function runMcpCli(argv: string[]): void {
  let settings: McpSettings;
  try {
    const { values } = parseArgs({ args: argv, options: { url: { type: 'string' }, key: { type: 'string' }, project: { type: 'string' } }, strict: true });
    settings = mcpSettings(values, process.env);
  } catch (error) {
    process.stderr.write(`proctor mcp: ${(error as Error).message}\n${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  relay(settings).then(
    () => process.exit(0),
    (error: Error) => {
      process.stderr.write(`proctor mcp: ${error.message}\n`);
      process.exit(1);
    },
  );
}
