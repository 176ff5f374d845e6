import { createHmac, createPrivateKey } from 'node:crypto';
import type { Configuration, KoaContextWithOIDC, default as OidcProvider } from 'oidc-provider';
import type { Core } from '../../core.ts';
import { getInstallationSecret } from '../installation.ts';
import { PostgresAdapter } from './adapter.ts';
import { INTERACTION_PATH, isLoopbackHost, mcpResource, OAUTH_SCOPES, oauthIssuer } from './resource.ts';

/**
 * The OAuth 2.1 authorization server of the MCP server: oidc-provider (OpenID Certified), configured as
 * the MCP specification's Authorization section asks: RFC 8414 metadata, dynamic client registration
 * (RFC 7591), the authorization code flow with PKCE (S256, always), resource indicators (RFC 8707: tokens
 * only for the MCP server, `${PUBLIC_URL}/mcp`), opaque access tokens of an hour, refresh tokens rotated
 * on every use (30 days), revocation (RFC 7009). The user signs in and consents in the console
 * (`/oauth/interaction/:uid`); its own dev pages are off.
 *
 * Built on the first request that needs it (an /oauth route, its metadata) and kept for the process, so
 * a gateway nobody connects to through OAuth never loads the library. oidc-provider 9 is made for
 * Node 22 and warns on load under Node 20, where it runs (Node ≥ 20.18: it needs `URL.parse`).
 */

export type Provider = OidcProvider;

/** How long an access token works. */
export const ACCESS_TOKEN_SECS = 3600;
/** How long a refresh token works unused; each use gives a new one (rotation), the used one then refused. */
export const REFRESH_TOKEN_SECS = 30 * 24 * 3600;
/** How long a user may take at the consent page. */
const INTERACTION_SECS = 3600;
/**
 * A Client ID Metadata Document: fetched within this time and size (the draft's 5 KB, a larger answer
 * refused), cached from 30 seconds to a day as its Cache-Control says (30 seconds without one).
 */
const CLIENT_DOCUMENT_LIMITS = { timeoutMs: 2_500, maxBytes: 64 * 1024 };

/** A grant lasts until it is revoked (a connection in the console); this is only the store's bound. */
const GRANT_SECS = 10 * 365 * 24 * 3600;

type ProviderDeps = Pick<Core, 'db' | 'config' | 'network'>;

const built = new WeakMap<ProviderDeps, Promise<Provider>>();

/** The process's authorization server, built on first use. */
export function oauthProvider(core: ProviderDeps): Promise<Provider> {
  let provider = built.get(core);
  if (!provider) {
    provider = buildProvider(core);
    provider.catch(() => built.delete(core));
    built.set(core, provider);
  }
  return provider;
}

/** Keys derived from the installation secret: the cookies' signing key, an Ed25519 key for ID tokens. */
function derivedKeys(secret: Buffer) {
  const derive = (purpose: string) => createHmac('sha256', secret).update(`leadgate oauth ${purpose}`).digest();
  // An Ed25519 private key is any 32 bytes: its PKCS #8 form is a fixed prefix and the seed.
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), derive('signing key')]);
  const jwk = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ format: 'jwk' });
  return { cookieKey: derive('cookies').toString('base64url'), jwk: { ...jwk, kid: 'leadgate-1', use: 'sig' } };
}

async function buildProvider(core: ProviderDeps): Promise<Provider> {
  const [{ default: Provider, errors }, secret] = await Promise.all([
    import('oidc-provider'),
    getInstallationSecret(core.db),
  ]);
  const resource = mcpResource(core.config);
  const { cookieKey, jwk } = derivedKeys(secret);

  const configuration: Configuration = {
    adapter: (model: string) => new PostgresAdapter(core.db, model),
    // The MCP server's scopes (resource.ts); clients send them (the SDK puts them in its registration too).
    scopes: ['openid', 'offline_access', ...OAUTH_SCOPES],
    claims: { openid: ['sub'] },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    jwks: { keys: [jwk] },
    enabledJWA: { idTokenSigningAlgValues: ['EdDSA'] },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      id_token_signed_response_alg: 'EdDSA',
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
    cookies: { keys: [cookieKey] },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      // Clients named by the https URL of their metadata document (the MCP specification's preferred
      // registration); dynamic registration stays for clients without one.
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
      revocation: {
        enabled: true,
        // A client revokes its own tokens only.
        allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId,
      },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) throw new errors.InvalidTarget(`The only resource here is ${resource}`);
          return {
            scope: OAUTH_SCOPES.join(' '),
            audience: resource,
            accessTokenTTL: ACCESS_TOKEN_SECS,
            accessTokenFormat: 'opaque',
          };
        },
      },
    },
    // Redirect URIs: https, or http on this machine (OAuth 2.1): checked on registration and every load.
    extraClientMetadata: {
      properties: ['leadgate_redirect_check'],
      validator: (_ctx, key, _value, metadata) => {
        if (key !== 'leadgate_redirect_check') return;
        for (const uri of (metadata.redirect_uris ?? []) as string[]) {
          const url = URL.parse(uri);
          if (url && url.protocol === 'http:' && !isLoopbackHost(url.hostname))
            throw new errors.InvalidClientMetadata(
              'redirect_uris must use https, or http on a loopback host (localhost, 127.0.0.1, [::1])',
            );
        }
      },
    },
    clientBasedCORS: (_ctx, origin, client) =>
      client.redirectUris?.some((uri) => URL.parse(uri)?.origin === origin) ?? false,
    interactions: { url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}` },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: () => true,
    // Tokens live by their own times and their grant, not the browser's visit to the authorization server.
    expiresWithSession: async () => false,
    ttl: {
      AccessToken: ACCESS_TOKEN_SECS,
      AuthorizationCode: 60,
      IdToken: ACCESS_TOKEN_SECS,
      RefreshToken: REFRESH_TOKEN_SECS,
      Interaction: INTERACTION_SECS,
      Session: INTERACTION_SECS,
      Grant: GRANT_SECS,
    },
    // What the authorization server fetches (client metadata documents) goes through the outbound guard.
    fetch: (url, options) => fetchThroughGuard(core.network, String(url), options?.signal ?? undefined),
    renderError: (ctx: KoaContextWithOIDC, out) => {
      ctx.type = 'html';
      ctx.body = errorPage(out);
    },
  };

  const provider = new Provider(oauthIssuer(core.config), configuration);
  // Behind TRUST_PROXY, the scheme and host the proxies report (X-Forwarded-Proto, -Host) are the request's.
  provider.proxy = core.config.trustProxy !== undefined;
  return provider;
}

/** A GET of the authorization server as a fetch Response: through the guard, no redirect followed. */
async function fetchThroughGuard(network: Core['network'], url: string, signal?: AbortSignal): Promise<Response> {
  const answer = await network.getDocument(url, CLIENT_DOCUMENT_LIMITS, signal);
  return new Response(answer.body, {
    status: answer.status,
    headers: answer.contentType ? { 'content-type': answer.contentType } : {},
  });
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** The page of an authorization that cannot go on (an unknown client, a wrong redirect URI, an expired link). */
function errorPage(out: { error: string; error_description?: string }): string {
  return (
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Authorization failed</title></head>' +
    '<body><main><h1>This authorization could not go on</h1>' +
    `<p>${escapeHtml(out.error_description ?? 'The request is not valid.')}</p>` +
    `<p>Error code: <code>${escapeHtml(out.error)}</code>. Start again from the app you were connecting.</p>` +
    '</main></body></html>'
  );
}
