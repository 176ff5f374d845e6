import type { Config } from '../../config.ts';
import { TOOLSET_NAMES, type Toolset } from '../../tools/toolsets.ts';

/**
 * Where OAuth lives on the gateway (docs/api.md, "Connecting hosted agents (OAuth)"): the authorization
 * server's issuer under /oauth, the one protected resource (the MCP server at /mcp) and its scope.
 * The URLs follow PUBLIC_URL, read when asked: on port 0 it is known only once the server listens.
 */

/** The issuer's path: oidc-provider's routes (`/oauth/auth`, `/oauth/token`, `/oauth/reg`, …) are under it. */
export const OAUTH_PATH = '/oauth';

/** Where a pending authorization waits for the user: the console's consent page, and its confirm and abort. */
export const INTERACTION_PATH = `${OAUTH_PATH}/interaction`;

/** The path of the only resource tokens are issued for. */
export const RESOURCE_PATH = '/mcp';

/**
 * The scopes of the MCP server: `leads`, a connection to it; `leads:<toolset>`, the tools of a toolset
 * (the run tools come with any); `leads:write`, tools that start runs or change something (without it,
 * read-only). A client asks for some (the 401's challenge names those of the tools its URL selects);
 * the user chooses at consent, the consent page offering what was asked checked; the choice is kept on
 * the connection (`oauth_grant`), which is what every call is checked against. A call outside it is
 * refused with an `insufficient_scope` challenge naming the scopes that would allow it (a step-up).
 */
export const OAUTH_SCOPE = 'leads';

/** The scope of tools that start runs or change something. */
export const WRITE_SCOPE = 'leads:write';

/** The scope of a toolset's tools. */
export const toolsetScope = (toolset: Toolset) => `${OAUTH_SCOPE}:${toolset}`;

/** Every scope of the MCP server, as its metadata lists them. */
export const OAUTH_SCOPES: readonly string[] = [OAUTH_SCOPE, ...TOOLSET_NAMES.map(toolsetScope), WRITE_SCOPE];

/** What a connection may do: the toolsets chosen, and whether only tools that change nothing. */
export interface Access {
  toolsets: readonly Toolset[];
  readOnly: boolean;
}

/**
 * The scopes of `access`, space-separated as OAuth spells a scope: `leads`, its toolsets', and
 * `leads:write` unless read-only.
 */
export function scopesOf(access: Access): string {
  const toolsets = TOOLSET_NAMES.filter((name) => access.toolsets.includes(name)).map(toolsetScope);
  return [OAUTH_SCOPE, ...toolsets, ...(access.readOnly ? [] : [WRITE_SCOPE])].join(' ');
}

/**
 * The access a scope string asks for; undefined when it names no toolset and no `leads:write` (a client
 * that asks for `leads` alone leaves the choice to the user).
 */
export function accessAskedFor(scope: string): Access | undefined {
  const asked = new Set(scope.split(' ').filter(Boolean));
  const toolsets = TOOLSET_NAMES.filter((name) => asked.has(toolsetScope(name)));
  if (toolsets.length === 0 && !asked.has(WRITE_SCOPE)) return undefined;
  return { toolsets, readOnly: !asked.has(WRITE_SCOPE) };
}

/** What the protected-resource metadata and the consent page call the resource. */
export const RESOURCE_NAME = 'leadgate MCP server';

/** The authorization server's issuer: `${PUBLIC_URL}/oauth`. */
export const oauthIssuer = (config: Pick<Config, 'publicUrl'>) => `${config.publicUrl}${OAUTH_PATH}`;

/** The canonical URI of the MCP server (RFC 8707 resource, the access tokens' audience): `${PUBLIC_URL}/mcp`. */
export const mcpResource = (config: Pick<Config, 'publicUrl'>) => `${config.publicUrl}${RESOURCE_PATH}`;

/** Whether a host name (as `URL.hostname` gives it) is this machine's: a redirect there reaches no one else. */
export function isLoopbackHost(hostname: string): boolean {
  const name = hostname.replace(/^\[|\]$/g, '');
  return name === 'localhost' || name.endsWith('.localhost') || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name);
}
