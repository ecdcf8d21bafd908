import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Request, Response } from 'express';
import type { AppDeps } from '../context.ts';
import type { Scope } from '../principals.ts';
import { proctorMcpServer } from './server.ts';

/** Answers one MCP POST with a server made for the request's key, closed with the response. */
export async function answerMcp(deps: AppDeps, scope: Scope, version: string, req: Request, res: Response): Promise<void> {
  const server = proctorMcpServer(deps, scope, version);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
}
