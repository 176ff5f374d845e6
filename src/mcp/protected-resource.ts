import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Config } from '../config.ts';
import type { Core } from '../core.ts';
import {
  type Access,
  mcpResource,
  OAUTH_SCOPES,
  oauthIssuer,
  RESOURCE_NAME,
  scopesOf,
} from '../accounts/oauth/resource.ts';

/**
 * The MCP server as an OAuth protected resource (RFC 9728; the MCP specification's Authorization
 * section): its metadata at both well-known addresses clients try, `/.well-known/oauth-protected-resource/mcp`
 * (the path-inserted form) and `/.well-known/oauth-protected-resource`, naming the authorization server
 * (`${PUBLIC_URL}/oauth`) and the scopes; and the `WWW-Authenticate` challenges of its 401s and of its
 * step-ups (403 `insufficient_scope`), which point to that metadata. A query string is ignored (the MCP
 * SDK appends the server URL's).
 */

export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/** Where the metadata of the MCP server is (the path-inserted form of RFC 9728). */
export const resourceMetadataUrl = (config: Pick<Config, 'publicUrl'>) =>
  `${config.publicUrl}${PROTECTED_RESOURCE_PATH}/mcp`;

/**
 * The challenge of a 401 at /mcp: the realm, where the resource's metadata is and the scopes to ask
 * for (those of the tools the request selects: `needs`); `error="invalid_token"` when a credential came
 * and was refused (RFC 6750).
 */
export function mcpChallenge(config: Pick<Config, 'publicUrl'>, credentialSent: boolean, needs: Access): string {
  const error = credentialSent ? 'error="invalid_token", ' : '';
  const metadata = resourceMetadataUrl(config);
  return `Bearer realm="leadgate", ${error}resource_metadata="${metadata}", scope="${scopesOf(needs)}"`;
}

/**
 * The challenge of a call its connection's grant does not cover (RFC 6750 `insufficient_scope`, the MCP
 * specification's step-up): every scope the call needs, those already granted included, so a client
 * that asks for exactly these gets a connection that can make it.
 */
export function insufficientScopeChallenge(config: Pick<Config, 'publicUrl'>, needs: Access, description: string) {
  // RFC 6750 allows printable ASCII but `"` and `\` in it.
  const quoted = description.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, "'");
  return (
    `Bearer realm="leadgate", error="insufficient_scope", scope="${scopesOf(needs)}", ` +
    `resource_metadata="${resourceMetadataUrl(config)}", error_description="${quoted}"`
  );
}

/** The RFC 9728 metadata document of the MCP server. */
export function protectedResourceMetadata(config: Pick<Config, 'publicUrl'>) {
  return {
    resource: mcpResource(config),
    authorization_servers: [oauthIssuer(config)],
    scopes_supported: [...OAUTH_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: RESOURCE_NAME,
  };
}

export async function protectedResourceRoutes(app: FastifyInstance, { core }: { core: Core }) {
  const answer = async (_request: unknown, reply: FastifyReply) =>
    reply
      // Public metadata: any page may read it (browser-based MCP clients discover from their own origin).
      .header('Access-Control-Allow-Origin', '*')
      .header('Cache-Control', 'public, max-age=300')
      .send(protectedResourceMetadata(core.config));
  app.get(`${PROTECTED_RESOURCE_PATH}/mcp`, answer);
  app.get(PROTECTED_RESOURCE_PATH, answer);
}
