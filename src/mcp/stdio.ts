import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import pino from 'pino';
import { createLogger } from '../logger.ts';
import { restBackend } from './rest-client.ts';
import { createMcpServer } from './server.ts';
import { selectionOf } from './selection.ts';
import { MCP_TOOLS } from './tools.ts';

export interface StdioOptions {
  /** Base URL of a leadgate server; default $LEADGATE_URL. */
  url?: string;
  /** API key; default $LEADGATE_API_KEY. */
  key?: string;
  /** Toolsets or tools to offer, comma-separated (as the remote server's `tools`); default $LEADGATE_TOOLS. */
  tools?: string;
  /** Offer only the tools that change nothing. */
  readOnly?: boolean;
}

/**
 * `npx leadgate mcp`: the MCP tools over stdio, for a local MCP client, as a client of a leadgate
 * server's REST API. Stdout carries protocol messages only; logs go to stderr. Resolves when the
 * client closes stdin.
 */
export async function serveStdio(options: StdioOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const url = options.url ?? env.LEADGATE_URL;
  const key = options.key ?? env.LEADGATE_API_KEY;
  if (!url)
    throw new Error('give the leadgate server with --url or LEADGATE_URL, e.g. --url https://leadgate.example.com');
  if (!/^https?:\/\//.test(url)) throw new Error(`--url must be an http or https URL, got "${url}"`);
  if (!key) throw new Error('give an API key with --key or LEADGATE_API_KEY');

  const logger = createLogger(env.LOG_LEVEL ?? 'warn', pino.destination(2));
  const selection = selectionOf({ tools: options.tools ?? env.LEADGATE_TOOLS }, () => undefined, MCP_TOOLS);
  // The plan and role are the server's to check: over stdio, every selected tool is listed.
  const tools = MCP_TOOLS.filter(
    (tool) =>
      (selection.toolsets.includes(tool.toolset) || tool.toolset === 'runs' || selection.tools.includes(tool.name)) &&
      (!options.readOnly || tool.annotations.readOnlyHint),
  );
  const server = createMcpServer({ backend: restBackend(url, key), tools, logger });
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  await server.connect(new StdioServerTransport());
  process.stdin.once('end', () => void server.close());
  await closed;
}
