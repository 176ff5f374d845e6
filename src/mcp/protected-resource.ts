import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Config } from '../config.ts';
import type { Core } from '../core.ts';
import { mcpResource, OAUTH_SCOPE, oauthIssuer, RESOURCE_NAME } from '../accounts/oauth/resource.ts';

/**
 * The MCP server as an OAuth protected resource (RFC 9728; the MCP specification's Authorization
 * section): its metadata at both well-known addresses clients try, `/.well-known/oauth-protected-resource/mcp`
 * (the path-inserted form) and `/.well-known/oauth-protected-resource`, naming the authorization server
 * (`${PUBLIC_URL}/oauth`) and the scope; and the `WWW-Authenticate` challenge of its 401s, which points
 * to that metadata. A query string is ignored (the MCP SDK appends the server URL's).
 */

export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/** Where the metadata of the MCP server is (the path-inserted form of RFC 9728). */
export const resourceMetadataUrl = (config: Pick<Config, 'publicUrl'>) =>
  `${config.publicUrl}${PROTECTED_RESOURCE_PATH}/mcp`;

/**
 * The challenge of a 401 at /mcp: the realm, where the resource's metadata is and the scope to ask for;
 * `error="invalid_token"` when a credential came and was refused (RFC 6750).
 */
export function mcpChallenge(config: Pick<Config, 'publicUrl'>, credentialSent: boolean): string {
  const error = credentialSent ? 'error="invalid_token", ' : '';
  return `Bearer realm="leadgate", ${error}resource_metadata="${resourceMetadataUrl(config)}", scope="${OAUTH_SCOPE}"`;
}

/** The RFC 9728 metadata document of the MCP server. */
export function protectedResourceMetadata(config: Pick<Config, 'publicUrl'>) {
  return {
    resource: mcpResource(config),
    authorization_servers: [oauthIssuer(config)],
    scopes_supported: [OAUTH_SCOPE],
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
