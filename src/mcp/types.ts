import type { Plan } from '../../db/tables/accounts.ts';
import type { Permission } from '../accounts/roles.ts';
import type { Toolset } from '../tools/toolsets.ts';
import type { McpBackend } from './backend.ts';
import type { JsonSchema } from './schemas.ts';

/** A link the answer carries beside its data (MCP `resource_link` content). */
export interface ResourceLink {
  uri: string;
  name: string;
  mimeType: string;
  description: string;
}

export interface ToolContext {
  backend: McpBackend;
  signal: AbortSignal;
  /** Tells the client how a wait goes (a progress notification), when it asked for them. */
  progress(view: Record<string, unknown>): void;
}

export interface ToolAnswer {
  structured: Record<string, unknown>;
  links?: ResourceLink[];
}

export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  toolset: Toolset;
  /** Listed only to callers whose plan includes it. */
  plan?: Plan;
  /** Listed only to callers whose role allows it. */
  permission?: Permission;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  call(context: ToolContext, args: Record<string, unknown>): Promise<ToolAnswer>;
}
