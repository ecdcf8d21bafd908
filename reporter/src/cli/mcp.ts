import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { ApiError, postForText, type TransportOptions } from '../api/transport.ts';
import { EXIT, type ExitCode, openCommand, UsageError } from './exit.ts';

// `proctor-ci mcp`: Proctor's MCP server for an assistant that starts a local process. MCP's stdio
// transport (a JSON-RPC message a line) relayed to the server's Streamable HTTP endpoint, /mcp, one
// POST a message, with the key: the server's tools, roles and bounds, and nothing here but the key.
// The server answers each POST by itself (it keeps no session), in JSON or as an event stream.

export const MCP_USAGE = `usage: proctor-ci mcp [--url URL] [--key KEY] [--project ID]
  Proctor's MCP server on stdio, for an assistant that starts a process: every message is relayed to
  the server's /mcp with the key. URL, KEY and ID also from PROCTOR_URL, PROCTOR_API_KEY and
  PROCTOR_PROJECT_ID (the project of a personal key that belongs to several).`;

interface JsonRpcMessage {
  jsonrpc: '2.0';
  id?: string | number | null;
  method?: string;
  result?: { protocolVersion?: string };
}

function settingsOf(args: string[], env: NodeJS.ProcessEnv): TransportOptions {
  let values;
  try {
    ({ values } = parseArgs({ args, options: { url: { type: 'string' }, key: { type: 'string' }, project: { type: 'string' } }, strict: true }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const url = (values.url ?? env.PROCTOR_URL ?? '').replace(/\/+$/, '');
  const apiKey = values.key ?? env.PROCTOR_API_KEY ?? '';
  const projectId = values.project ?? env.PROCTOR_PROJECT_ID ?? null;
  if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError("--url (or PROCTOR_URL) must be the server's http(s) URL");
  if (!apiKey) throw new UsageError('--key (or PROCTOR_API_KEY) must be a personal or project key');
  if (projectId !== null && !/^\d{1,10}$/.test(projectId)) throw new UsageError('--project (or PROCTOR_PROJECT_ID) must be a project id');
  // One attempt: a tool that writes (a snooze) is not sent twice; the assistant may ask again.
  return { url, apiKey, projectId, maxAttempts: 1, maxBackoffMs: 0 };
}

/** The messages of an answer: a JSON message or batch, or an event stream's `data:` lines. */
function messagesIn(text: string): JsonRpcMessage[] {
  if (!text.trim()) return [];
  if (/^(event|data|id|retry):/m.test(text.trimStart().split('\n')[0] ?? '')) {
    return text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5).trim()) as JsonRpcMessage);
  }
  const parsed = JSON.parse(text) as JsonRpcMessage | JsonRpcMessage[];
  return Array.isArray(parsed) ? parsed : [parsed];
}

/** Relays until the assistant closes stdin and the last answer is written. */
export async function relayMcp(options: TransportOptions, name: string): Promise<void> {
  let protocolVersion: string | null = null;
  const write = (message: JsonRpcMessage) => process.stdout.write(`${JSON.stringify(message)}\n`);
  const pending = new Set<Promise<void>>();

  async function forward(message: JsonRpcMessage): Promise<void> {
    const headers: Record<string, string> = {
      accept: 'application/json, text/event-stream',
      ...(protocolVersion ? { 'mcp-protocol-version': protocolVersion } : {}),
    };
    try {
      for (const answer of messagesIn(await postForText(options, '/mcp', message, headers))) {
        if (message.method === 'initialize' && answer.id === message.id && answer.result?.protocolVersion) protocolVersion = answer.result.protocolVersion;
        write(answer);
      }
    } catch (error) {
      process.stderr.write(`${name}: ${(error as Error).message}\n`);
      // A request the server did not answer is answered here, so the assistant does not wait for ever.
      if (message.id !== undefined && message.method !== undefined) {
        const reached = !(error instanceof ApiError && error.status === null);
        write({
          jsonrpc: '2.0',
          id: message.id,
          error: {
            code: -32603,
            message: reached ? `Proctor at ${options.url} refused it: ${(error as Error).message}` : `Proctor at ${options.url} could not be reached`,
          },
        } as JsonRpcMessage);
      }
    }
  }

  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let message: JsonRpcMessage;
    try {
      message = JSON.parse(line) as JsonRpcMessage;
    } catch {
      write({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: a line on stdin is not JSON' } } as JsonRpcMessage);
      continue;
    }
    // The first message (initialize) settles the protocol's version before any other goes out.
    const sent = forward(message);
    if (message.method === 'initialize') await sent;
    pending.add(sent);
    void sent.finally(() => pending.delete(sent));
  }
  await Promise.all(pending);
}

/** `name`: the command as the person typed it (`proctor-ci mcp`, or the server package's `proctor mcp`), for its messages. */
export async function mcpCommand(args: string[], env: NodeJS.ProcessEnv, name = 'proctor-ci mcp'): Promise<ExitCode> {
  const opened = openCommand(
    args,
    MCP_USAGE,
    () => settingsOf(args, env),
    (message) => process.stderr.write(`${name}: ${message}\n`),
  );
  if ('exit' in opened) return opened.exit;
  await relayMcp(opened.settings, name);
  return EXIT.passed;
}
