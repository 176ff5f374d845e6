import type { Access } from '../accounts/oauth/resource.ts';
import type { Principal } from '../accounts/principal.ts';
import { may } from '../accounts/roles.ts';
import { planIncludes } from '../billing/plans.ts';
import { AppError } from '../shared/errors.ts';
import { TOOLSET_NAMES, TOOLSETS, isToolset, type Toolset } from '../tools/toolsets.ts';
import type { McpTool } from './types.ts';

/**
 * Which tools a client sees, as GitHub's and Apify's servers let it choose: toolsets (and single tools)
 * by the `tools` query parameter of the server's URL (for clients that take only a URL) or the
 * `X-MCP-Toolsets` and `X-MCP-Tools` headers; read-only by `readonly` or `X-MCP-Readonly`. A toolset
 * name it does not know is ignored (a name may be retired); a tool name it does not know is refused.
 * Read-only wins over everything. Tools the caller's plan or role cannot use are never listed, nor
 * outside an OAuth grant's toolsets; an OAuth connection that selects nothing sees its grant's toolsets
 * (what the user chose at consent), anyone else the default ones. The run tools come with any toolset
 * whose tools start runs.
 */
export interface Selection {
  toolsets: Toolset[];
  tools: string[];
  readOnly: boolean;
  /** Whether the request named toolsets or tools (`toolsets` is the default ones when it did not). */
  chosen: boolean;
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
    chosen: names.length > 0,
  };
}

/**
 * What a selection needs of an OAuth connection: its toolsets and those of its single tools, and
 * writing unless it is read-only. The scopes a 401's challenge asks for (least privilege: the tools
 * the client will see).
 */
export function accessOf(selection: Selection, known: readonly McpTool[]): Access {
  const toolsets = new Set(selection.toolsets);
  for (const name of selection.tools) {
    const tool = known.find((t) => t.name === name);
    if (tool) toolsets.add(tool.toolset);
  }
  return { toolsets: TOOLSET_NAMES.filter((name) => toolsets.has(name)), readOnly: selection.readOnly };
}

/** The tools `principal` may see and call under `selection`, in the catalogue's order. */
export function visibleTools(all: readonly McpTool[], selection: Selection, principal: Principal): McpTool[] {
  const granted = principal.oauth?.toolsets;
  const readOnly = selection.readOnly || principal.oauth?.readOnly === true;
  const chosen = new Set(selection.chosen || !granted ? selection.toolsets : TOOLSET_NAMES);
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

/**
 * For an OAuth caller, what its connection would need to call `tool`, when only the connection keeps
 * it out (its toolset not granted, or writing on a read-only connection) and the request's selection,
 * the plan and the role allow it: the connection's access widened by the tool's toolset and, for a tool
 * that changes something, writing. Undefined when the tool is callable, or kept out by something a
 * wider grant would not change (an API key, the selection, the plan, the role).
 */
export function accessNeeded(
  all: readonly McpTool[],
  tool: McpTool,
  selection: Selection,
  principal: Principal,
): Access | undefined {
  const grant = principal.oauth;
  if (!grant || visibleTools(all, selection, principal).includes(tool)) return undefined;
  const unlimited: Selection = selection.chosen ? selection : { ...selection, toolsets: [...TOOLSET_NAMES] };
  if (!visibleTools(all, { ...unlimited, chosen: true }, { ...principal, oauth: undefined }).includes(tool))
    return undefined;
  const toolsets = new Set([...grant.toolsets, tool.toolset]);
  return {
    toolsets: TOOLSET_NAMES.filter((name) => toolsets.has(name)),
    readOnly: grant.readOnly && tool.annotations.readOnlyHint === true,
  };
}
