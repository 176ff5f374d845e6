import type { Config } from '../../config.ts';

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
 * The one scope: what a connection may do is chosen at consent (the account, the toolsets, read-only)
 * and kept with its grant, not spelled as scopes.
 */
export const OAUTH_SCOPE = 'leads';

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
