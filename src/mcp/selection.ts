import type { Principal } from '../accounts/principal.ts';
import { may } from '../accounts/roles.ts';
import { planIncludes } from '../billing/plans.ts';
import { AppError } from '../shared/errors.ts';
import { TOOLSETS, isToolset, type Toolset } from '../tools/toolsets.ts';
import type { McpTool } from './types.ts';

/**
 * Which tools a client sees, as GitHub's and Apify's servers let it choose: toolsets (and single tools)
 * by the `tools` query parameter of the server's URL (for clients that take only a URL) or the
 * `X-MCP-Toolsets` and `X-MCP-Tools` headers; read-only by `readonly` or `X-MCP-Readonly`. A toolset
 * name it does not know is ignored (a name may be retired); a tool name it does not know is refused.
 * Read-only wins over everything. Tools the caller's plan or role cannot use are never listed, nor
 * outside an OAuth grant's toolsets. The run tools come with any toolset whose tools start runs.
 */
export interface Selection {
  toolsets: Toolset[];
  tools: string[];
  readOnly: boolean;
}

/** What a client that chooses nothing gets: finding local businesses and their emails, runs, the wallet. */
export const DEFAULT_TOOLSETS: readonly Toolset[] = ['maps', 'emails', 'runs', 'account'];

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const FALSE = new Set(['', 'false', 'f', 'no', 'n', '0', 'off']);

/** The selection of a request, from the query string and headers; `all` selects every toolset. */
export function selectionOf(
  query: Record<string, string | undefined>,
  header: (name: string) => string | undefined,
  known: readonly McpTool[],
): Selection {
  const names = [...list(query.tools), ...list(header('x-mcp-toolsets')), ...list(header('x-mcp-tools'))];
  const toolsets = new Set<Toolset>();
  const tools: string[] = [];
  for (const name of names) {
    if (name === 'all') for (const t of Object.keys(TOOLSETS) as Toolset[]) toolsets.add(t);
    else if (isToolset(name)) toolsets.add(name);
    else if (known.some((tool) => tool.name === name)) tools.push(name);
    else if (!/^[a-z]+$/.test(name) || header('x-mcp-tools')?.includes(name))
      throw new AppError(
        400,
        'validation_failed',
        `There is no tool or toolset "${name}". Toolsets: ${Object.keys(TOOLSETS).join(', ')}.`,
        [{ path: 'tools', message: `unknown tool or toolset "${name}"` }],
      );
  }
  const readOnly = [query.readonly, header('x-mcp-readonly')].some((v) => v !== undefined && !FALSE.has(v));
  return {
    toolsets: names.length === 0 ? [...DEFAULT_TOOLSETS] : [...toolsets],
    tools,
    readOnly,
  };
}

/** The tools `principal` may see and call under `selection`, in the catalogue's order. */
export function visibleTools(all: readonly McpTool[], selection: Selection, principal: Principal): McpTool[] {
  const granted = principal.oauth?.toolsets;
  const readOnly = selection.readOnly || principal.oauth?.readOnly === true;
  const chosen = new Set(selection.toolsets);
  // The run tools follow the runs other toolsets start.
  if (all.some((t) => chosen.has(t.toolset) && !t.annotations.readOnlyHint && t.toolset !== 'account'))
    chosen.add('runs');
  return all.filter(
    (tool) =>
      (chosen.has(tool.toolset) || selection.tools.includes(tool.name)) &&
      (!granted || granted.includes(tool.toolset) || (tool.toolset === 'runs' && granted.length > 0)) &&
      (!readOnly || tool.annotations.readOnlyHint) &&
      planIncludes(principal.plan, tool.plan) &&
      (!tool.permission || may(principal, tool.permission)),
  );
}
