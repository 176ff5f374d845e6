import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  extractWWWAuthenticateParams,
  refreshAuthorization,
  registerClient,
  startAuthorization,
  UnauthorizedError,
  type OAuthClientProvider,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INSUFFICIENT_SCOPE_RPC_CODE } from '../../../src/mcp/http.ts';
import { DEFAULT_TOOLSETS } from '../../../src/mcp/selection.ts';
import { MCP_TOOLS } from '../../../src/mcp/tools.ts';
import { TOOLSET_NAMES } from '../../../src/tools/toolsets.ts';
import { audit, launchConsoleBrowser, visible, type ConsoleBrowser } from '../../helpers/browser.ts';
import { startIdentityApp, type Browser, type IdentityApp } from '../../helpers/identity.ts';
import { waitFor } from '../../helpers/wait.ts';
import { addMembership } from '../../../src/accounts/members.ts';
import { loadConfig } from '../../../src/config.ts';
import { API_CSP } from '../../../src/http/headers.ts';
import { DENVER_DENTISTS } from '../../helpers/app.ts';

/**
 * Hosted agents connect to the MCP server through OAuth 2.1, as the MCP specification's Authorization
 * section describes, with the official SDK client knowing only the server's URL: the 401's challenge
 * and the protected-resource metadata lead it to the authorization server, it registers itself, sends
 * the user to the console's consent page (driven here in Chromium: sign in, choose the toolsets,
 * allow), exchanges the code with its PKCE verifier, and calls tools; revoking the connection in the
 * console stops its tokens. The tokens work at /mcp only, for that resource only; PKCE is required,
 * refresh tokens rotate, and denying sends the app `access_denied`.
 */

const PASSWORD = 'correct horse battery';
const OWNER = 'owner@oauth.test';

let t: IdentityApp;
let ui: ConsoleBrowser;
let page: Page;
let owner: Browser;
let callbacks: Server;
let callbackUrl: string;
/** The query strings the app's callback received, newest last. */
const received: URLSearchParams[] = [];

/** Clients' metadata documents (CIMD), served over https from this machine, by path; and each path fetched. */
const CLIENT_TLS = {
  cert: readFileSync(new URL('../../fixtures/tls/client-documents.crt', import.meta.url), 'utf8'),
  key: readFileSync(new URL('../../fixtures/tls/client-documents.key', import.meta.url), 'utf8'),
};
const documents = new Map<string, { body: string; status?: number; location?: string }>();
const documentsFetched: string[] = [];
let documentServer: ReturnType<typeof createHttpsServer>;
let documentBase: string;

beforeAll(async () => {
  documentServer = createHttpsServer(CLIENT_TLS, (req, res) => {
    documentsFetched.push(req.url ?? '');
    const document = documents.get(req.url ?? '');
    if (!document) return void res.writeHead(404).end();
    res
      .writeHead(document.status ?? 200, {
        'content-type': 'application/json',
        ...(document.location ? { location: document.location } : {}),
      })
      .end(document.body);
  });
  await new Promise<void>((resolve) => documentServer.listen(0, '127.0.0.1', resolve));
  const documentPort = (documentServer.address() as AddressInfo).port;
  documentBase = `https://127.0.0.1:${documentPort}`;
  // The gateway reaches the document server only, as the web's https port, trusting its certificate.
  const network = {
    ...loadConfig({}).network,
    webPorts: { http: 80, https: documentPort },
    outboundAllow: [`127.0.0.1:${documentPort}`],
    trustedCa: [CLIENT_TLS.cert],
  };
  t = await startIdentityApp({ network });
  owner = await t.signUp(OWNER, PASSWORD);
  // The app's redirect URI: a local page, as a desktop or CLI agent would open.
  callbacks = createServer((req, res) => {
    received.push(new URL(req.url ?? '/', 'http://x').searchParams);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('You may close this window.');
  });
  await new Promise<void>((resolve) => callbacks.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(callbacks.address() as AddressInfo).port}/callback`;
  ui = await launchConsoleBrowser(t.url);
  page = await ui.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
}, 120_000);
afterAll(async () => {
  await ui?.close();
  await new Promise((resolve) => callbacks?.close(resolve));
  await new Promise((resolve) => documentServer?.close(resolve));
  await t?.stop();
});

/**
 * An agent's OAuth client as the SDK asks for one: it keeps what it is given, and opens the browser at
 * the URL. One registered without the refresh-token grant gets no refresh tokens.
 */
class AgentAuth implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier?: string;
  authorizationUrl?: URL;
  constructor(
    readonly name = 'Test Agent',
    readonly refreshes = true,
  ) {}
  get redirectUrl() {
    return callbackUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      redirect_uris: [callbackUrl],
      grant_types: this.refreshes ? ['authorization_code', 'refresh_token'] : ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      client_name: this.name,
    };
  }
  state() {
    return `state-${Math.random().toString(36).slice(2)}`;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client: OAuthClientInformationMixed) {
    this.client = client;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier!;
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
  }
}

/** One number a query counts. */
const count = async (rows: Promise<readonly { n: number }[]>) => (await rows)[0]!.n;

/** A form control of the page by its label (a required field's label ends in an asterisk). */
const field = (label: string) => page.getByLabel(new RegExp(`^${label}\\s*\\*?$`));
/** The consent page's checkbox of a toolset. */
const toolsetBox = (name: string) => page.getByRole('checkbox', { name: new RegExp(`^${name}$`, 'i') });

const mcpUrl = () => new URL(`${t.url}/mcp`);
const clients: Client[] = [];
async function connect(auth: AgentAuth): Promise<Client> {
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: auth }));
  clients.push(client);
  return client;
}
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
});

/** The app's callback, once the browser lands there after `count` earlier ones. */
const callbackAfter = async (count: number): Promise<URLSearchParams> =>
  (await waitFor(() => received[count], Boolean, { what: 'the redirect back to the app' }))!;

const mcpPost = (authorization?: string) =>
  fetch(`${t.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(authorization ? { authorization } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });

describe('discovery from the server URL alone', () => {
  it('answers 401 with a challenge naming the protected-resource metadata and the scopes of the tools selected', async () => {
    const res = await mcpPost();
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate')!;
    // No selection: the default toolsets, writing allowed.
    const defaults = 'leads leads:maps leads:emails leads:runs leads:account leads:write';
    expect(DEFAULT_TOOLSETS).toEqual(['maps', 'emails', 'runs', 'account']);
    expect(challenge).toBe(
      `Bearer realm="leadgate", resource_metadata="${t.url}/.well-known/oauth-protected-resource/mcp", scope="${defaults}"`,
    );
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(res);
    expect(resourceMetadataUrl?.href).toBe(`${t.url}/.well-known/oauth-protected-resource/mcp`);
    expect(scope).toBe(defaults);
    // A URL that selects toolsets or a tool, read-only, asks for those only; one naming no tool, the defaults.
    for (const [query, asked] of [
      ['?tools=database,enrichment&readonly=1', 'leads leads:enrichment leads:database'],
      ['?tools=find_emails', 'leads leads:emails leads:write'],
      ['?tools=no_such_tool', defaults],
    ] as const) {
      const selected = await fetch(`${t.url}/mcp${query}`, { method: 'POST', body: '{}' });
      expect(selected.status, query).toBe(401);
      expect(extractWWWAuthenticateParams(selected).scope, query).toBe(asked);
    }
    // A refused token says so (RFC 6750); the body stays the JSON error the MCP server answers.
    const refused = await mcpPost('Bearer not-a-token-of-this-server-at-all-0123456789');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(await refused.json()).toMatchObject({ error: { code: 'unauthenticated' } });
  });

  it('serves the protected-resource metadata (RFC 9728) at both well-known addresses, query strings ignored', async () => {
    const expected = {
      resource: `${t.url}/mcp`,
      authorization_servers: [`${t.url}/oauth`],
      scopes_supported: ['leads', ...TOOLSET_NAMES.map((name) => `leads:${name}`), 'leads:write'],
      bearer_methods_supported: ['header'],
      resource_name: 'leadgate MCP server',
    };
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource/mcp?tools=database',
      '/.well-known/oauth-protected-resource',
    ]) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(await res.json()).toEqual(expected);
    }
  });

  it('serves the authorization server metadata (RFC 8414) at the path-inserted address, PKCE S256 and registration', async () => {
    const res = await fetch(`${t.url}/.well-known/oauth-authorization-server/oauth`);
    expect(res.status).toBe(200);
    // The gateway's headers, though the authorization server writes the answer.
    expect(res.headers.get('content-security-policy')).toBe(API_CSP);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const metadata = await res.json();
    expect(metadata).toMatchObject({
      issuer: `${t.url}/oauth`,
      authorization_endpoint: `${t.url}/oauth/auth`,
      token_endpoint: `${t.url}/oauth/token`,
      registration_endpoint: `${t.url}/oauth/reg`,
      revocation_endpoint: `${t.url}/oauth/token/revocation`,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
    });
    expect(metadata.scopes_supported).toEqual(
      expect.arrayContaining(['leads', 'leads:write', ...TOOLSET_NAMES.map((name) => `leads:${name}`)]),
    );
    expect(metadata.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
    // The SDK finds it first, as the issuer's RFC 8414 address.
    const discovered = await discoverAuthorizationServerMetadata(new URL(`${t.url}/oauth`));
    expect(discovered?.issuer).toBe(`${t.url}/oauth`);
  });
});

/** What the main flow leaves for the next tests. */
let agent: AgentAuth;
let accessToken: string;

describe('an agent connects, calls tools, and is revoked in the console', { timeout: 120_000 }, () => {
  it('registers, sends the user to the consent page, gets a token for the toolsets chosen, and calls get_wallet', async () => {
    agent = new AgentAuth();
    const first = new Client({ name: 'oauth-test', version: '1.0.0' });
    await expect(first.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: agent }))).rejects.toThrow(
      UnauthorizedError,
    );
    const authorizationUrl = agent.authorizationUrl!;
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${t.url}/oauth/auth`);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(`${t.url}/mcp`);
    expect(agent.client?.client_id).toBeTruthy();

    // The user: the consent page asks them to sign in first, then shows the app and where it returns.
    const before = received.length;
    await page.goto(authorizationUrl.href);
    await visible(page.getByRole('heading', { name: 'Connect Test Agent' }));
    await audit(page);
    await field('Email').fill(OWNER);
    await field('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await visible(page.getByRole('group', { name: 'Toolsets' }));
    expect(await page.getByTestId('redirect-host').textContent()).toBe(new URL(callbackUrl).host);
    await visible(page.getByText('An app on this computer'));
    await audit(page);
    // Every toolset is offered; those the app asked for (the default ones: its URL selects none) are
    // checked, and writing allowed. The user leaves out maps and adds directories.
    for (const name of TOOLSET_NAMES)
      expect(await toolsetBox(name).isChecked(), name).toBe(DEFAULT_TOOLSETS.includes(name));
    expect(await page.getByRole('checkbox', { name: /^Read-only/ }).isChecked()).toBe(false);
    const left = 'maps';
    await toolsetBox(left).uncheck();
    await toolsetBox('directories').check();
    const chosen = TOOLSET_NAMES.filter(
      (name) => name === 'directories' || (DEFAULT_TOOLSETS.includes(name) && name !== left),
    );
    await page.getByRole('button', { name: 'Allow' }).click();

    const answer = await callbackAfter(before);
    expect(answer.get('error')).toBeNull();
    expect(answer.get('iss')).toBe(`${t.url}/oauth`);
    const code = answer.get('code')!;
    const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: agent });
    await transport.finishAuth(code);
    expect(agent.saved).toMatchObject({ token_type: expect.stringMatching(/^bearer$/i), expires_in: 3600 });
    expect(agent.saved?.refresh_token).toBeTruthy();
    // The token's scopes: those asked for that the user allowed.
    expect(agent.saved?.scope?.split(' ').sort()).toEqual(
      ['leads', 'leads:emails', 'leads:runs', 'leads:account', 'leads:write'].sort(),
    );
    accessToken = agent.saved!.access_token;

    const client = await connect(agent);
    const wallet = await client.callTool({ name: 'get_wallet', arguments: {} });
    expect(wallet.isError).not.toBe(true);
    // The list follows the grant (the app's URL selects nothing): the toolset added, none of the one left out.
    const { tools } = await client.listTools();
    const listed = tools.map((tool) => tool.name);
    expect(listed).toContain('get_wallet');
    expect(listed).toContain('scrape_leads_from_url');
    const leftOut = MCP_TOOLS.filter((tool) => tool.toolset === left).map((tool) => tool.name);
    expect(leftOut.length).toBeGreaterThan(0);
    expect(listed.filter((name) => leftOut.includes(name))).toEqual([]);
    const [grant] = await t.app.core.sql`
      select g.toolsets, g.read_only, g.client_name, g.redirect_host, g.last_used_at, u.email
      from oauth_grant g join app_user u on u.id = g.user_id`;
    expect(grant).toMatchObject({
      toolsets: chosen,
      read_only: false,
      client_name: 'Test Agent',
      redirect_host: new URL(callbackUrl).host,
      email: OWNER,
    });
    expect(grant!.last_used_at).not.toBeNull();
    // The account's audit log: the owner connected the app, with what it may use.
    const events = await t.app.core.sql`
      select actor_type, actor_label, target_type, target_label, details from audit_event where action = 'app.authorized'`;
    expect(events).toEqual([
      {
        actor_type: 'user',
        actor_label: OWNER,
        target_type: 'app',
        target_label: 'Test Agent',
        details: { client: 'Test Agent', redirectHost: new URL(callbackUrl).host, toolsets: chosen, readOnly: false },
      },
    ]);
    expect(ui.offOrigin).toEqual([]);
  });

  it('stores no token: only hashes of codes and tokens', async () => {
    const rows = await t.app.core.sql`select id_hash, payload::text from oauth_artifact`;
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.id_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(row.payload).not.toContain(accessToken);
      expect(row.payload).not.toContain(agent.saved!.refresh_token!);
    }
  });

  it('is refused on REST and GraphQL, where it is no API key', async () => {
    const rest = await fetch(`${t.url}/api/v1/wallet`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(rest.status).toBe(401);
    expect((await rest.json()).error.code).toBe('unauthenticated');
    const graphql = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ viewer { id } }' }),
    });
    expect(graphql.status).toBe(401);
    expect((await graphql.json()).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect((await mcpPost(`Bearer ${accessToken}`)).status).toBe(200);
  });

  it('lists the connection on the API keys page; Revoke stops the token, and the app must ask again', async () => {
    await page.goto('/keys');
    const table = page.getByRole('table', { name: 'Connected apps' });
    const row = table.getByRole('row').filter({ has: page.getByRole('cell', { name: 'Test Agent', exact: true }) });
    await visible(row.getByRole('cell', { name: 'directories, emails, runs, account', exact: true }));
    await audit(page);
    await row.getByRole('button', { name: 'Revoke Test Agent' }).click();
    await page.getByRole('dialog', { name: 'Revoke “Test Agent”?' }).getByRole('button', { name: 'Revoke' }).click();
    await visible(page.getByText('No app is connected.'));

    expect((await mcpPost(`Bearer ${accessToken}`)).status).toBe(401);
    const client = clients.at(-1)!;
    const asked = agent.authorizationUrl;
    // 401, then the SDK's refresh is refused (invalid_grant): it starts a new authorization.
    await expect(client.callTool({ name: 'get_wallet', arguments: {} })).rejects.toThrow(UnauthorizedError);
    expect(agent.authorizationUrl).not.toBe(asked);
    expect(agent.saved).toBeUndefined();
    const [grant] = await t.app.core.sql`select id, revoked_at from oauth_grant`;
    expect(grant!.revoked_at).not.toBeNull();
    const revoked = await t.app.core.sql`
      select actor_type, actor_label, target_id, details from audit_event where action = 'app.revoked'`;
    expect(revoked).toEqual([
      { actor_type: 'user', actor_label: OWNER, target_id: grant!.id, details: { client: 'Test Agent' } },
    ]);
    // Its codes and tokens are gone with it.
    const left = count(t.app.core.sql<{ n: number }[]>`
      select count(*)::int as n from oauth_artifact where grant_id = (select id from oauth_grant)`);
    expect(await left).toBe(0);
  });

  it('denying sends the app access_denied', async () => {
    const denied = new AgentAuth('Denied Agent');
    await expect(connect(denied)).rejects.toThrow(UnauthorizedError);
    const before = received.length;
    await page.goto(denied.authorizationUrl!.href);
    await visible(page.getByRole('heading', { name: 'Connect Denied Agent' }));
    await page.getByRole('button', { name: 'Deny' }).click();
    const answer = await callbackAfter(before);
    expect(answer.get('error')).toBe('access_denied');
    expect(answer.get('code')).toBeNull();
    const granted = count(t.app.core.sql<{ n: number }[]>`
      select count(*)::int as n from oauth_grant where client_name = 'Denied Agent'`);
    expect(await granted).toBe(0);
  });
});

describe('a call outside the connection: the user is asked for more, and the connection widens (step-up)', {
  timeout: 120_000,
}, () => {
  it('answers insufficient_scope with every scope the call needs; the consent page offers them checked', async () => {
    // An agent without refresh tokens (the SDK 1.32 client refreshes instead of asking the user when it has one).
    const stepping = new AgentAuth('Stepping Agent', false);
    await expect(connect(stepping)).rejects.toThrow(UnauthorizedError);
    const consent = await startConsent(stepping.authorizationUrl!);
    const details = await consent.details();
    expect(details.suggested).toEqual({ toolsets: [...DEFAULT_TOOLSETS], readOnly: false });
    expect(details.connection).toBeUndefined();
    const accountId: string = (await owner.request('GET', '/auth/session')).body.account.id;
    const back = await consent.allowed(await consent.confirm({ accountId, toolsets: ['account'], readOnly: true }));
    // What the server challenges the agent with, as the SDK's transport receives it.
    const challenges: Response[] = [];
    const recording: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (res.status === 403)
        challenges.push(new Response(await res.clone().text(), { status: 403, headers: res.headers }));
      return res;
    };
    const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: stepping, fetch: recording });
    await transport.finishAuth(back.searchParams.get('code')!);
    expect(stepping.saved?.refresh_token).toBeUndefined();
    expect(stepping.saved?.scope?.split(' ').sort()).toEqual(['leads', 'leads:account']);
    const firstToken = stepping.saved!.access_token;
    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    const listed = (await client.listTools()).tools.map((tool) => tool.name);
    expect(listed).toContain('get_wallet');
    expect(listed).not.toContain('scrape_maps');

    // The agent calls a tool of a toolset it was not given, which starts runs: asked to step up.
    const asked = stepping.authorizationUrl;
    await expect(client.callTool({ name: 'scrape_maps', arguments: DENVER_DENTISTS })).rejects.toThrow(
      UnauthorizedError,
    );
    expect(challenges).toHaveLength(1);
    const challenged = challenges[0]!;
    const { error, scope, resourceMetadataUrl } = extractWWWAuthenticateParams(challenged);
    expect(error).toBe('insufficient_scope');
    expect(scope).toBe('leads leads:maps leads:account leads:write');
    expect(resourceMetadataUrl?.href).toBe(`${t.url}/.well-known/oauth-protected-resource/mcp`);
    const refusal = await challenged.json();
    expect(refusal.error).toMatchObject({
      code: INSUFFICIENT_SCOPE_RPC_CODE,
      message: expect.stringContaining('scrape_maps is outside what the user allowed this app'),
      data: { scope: { toolsets: ['maps', 'account'], readOnly: false } },
    });
    expect(refusal.error.message).not.toMatch(/\/api\/|\bspec\b|\b[1-5]\d\d\b/);
    // The SDK asks the user for exactly those scopes.
    expect(stepping.authorizationUrl).not.toBe(asked);
    expect(stepping.authorizationUrl!.searchParams.get('scope')).toBe(scope);

    // The user, in the console: the connection's toolset and the one asked for are checked, writing allowed.
    const before = received.length;
    await page.goto(stepping.authorizationUrl!.href);
    await visible(page.getByRole('heading', { name: 'Connect Stepping Agent' }));
    if (await page.getByRole('button', { name: 'Sign in' }).isVisible()) {
      await field('Email').fill(OWNER);
      await field('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }
    await visible(page.getByTestId('connection-note'));
    expect(await page.getByTestId('connection-note').textContent()).toContain('with Account, read-only');
    await audit(page);
    for (const name of TOOLSET_NAMES)
      expect(await toolsetBox(name).isChecked(), name).toBe(name === 'maps' || name === 'account');
    expect(await page.getByRole('checkbox', { name: /^Read-only/ }).isChecked()).toBe(false);
    await page.getByRole('button', { name: 'Allow' }).click();
    const answer = await callbackAfter(before);
    expect(answer.get('error')).toBeNull();
    await transport.finishAuth(answer.get('code')!);

    // The retry reaches the tool: refused there for its own reason (over the cost limit the agent set).
    const capped = await client.callTool({ name: 'scrape_maps', arguments: { ...DENVER_DENTISTS, maxCostUsd: 0.01 } });
    expect(capped.isError).toBe(true);
    expect(JSON.stringify(capped.structuredContent ?? capped.content)).toContain('cost_limit_exceeded');
    // One connection, widened in place: its first token acts with what it holds now.
    const grants = await t.app.core.sql`
      select id, toolsets, read_only from oauth_grant where client_name = 'Stepping Agent'`;
    expect(grants).toEqual([{ id: expect.stringMatching(/^oag_/), toolsets: ['maps', 'account'], read_only: false }]);
    const principal = await t.app.core.auth.authenticate(`Bearer ${firstToken}`, { resource: `${t.url}/mcp` });
    expect(principal.oauth).toMatchObject({ grantId: grants[0]!.id, toolsets: ['maps', 'account'], readOnly: false });
  });

  it('asks for no step-up where a wider connection would not help: the URL leaves the tool out, or the plan', async () => {
    const { tokens } = await connectOverHttp();
    const post = (query: string, name: string) =>
      fetch(`${t.url}/mcp${query}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${tokens.access_token}`,
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: {} } }),
      });
    // The grant (runs and account, read-only) leaves out find_emails: a step-up, unless the URL leaves it out too.
    expect((await post('', 'find_emails')).status).toBe(403);
    const outsideSelection = await post('?tools=account', 'find_emails');
    expect(outsideSelection.status).toBe(200);
    expect((await outsideSelection.json()).error).toMatchObject({ code: -32602 });
    // enrich_local_businesses needs a plan this trial account is not on: no grant would let it through.
    const outsidePlan = await post('', 'enrich_local_businesses');
    expect(outsidePlan.status).toBe(200);
    expect((await outsidePlan.json()).error).toMatchObject({ code: -32602 });
  });
});

/**
 * The flow without a browser, for the token rules: the SDK's own registration, authorization URL and
 * token requests; the consent given over HTTP with the owner's console session and the interaction's cookies.
 */
async function authorizeOverHttp(options: { scope?: string } = {}) {
  const issuer = new URL(`${t.url}/oauth`);
  const metadata = (await discoverAuthorizationServerMetadata(issuer)) as AuthorizationServerMetadata;
  const clientInformation = await registerClient(issuer, {
    metadata,
    clientMetadata: new AgentAuth('Scripted Agent').clientMetadata,
    scope: 'leads',
  });
  const { authorizationUrl, codeVerifier } = await startAuthorization(issuer, {
    metadata,
    clientInformation,
    redirectUrl: callbackUrl,
    scope: options.scope ?? 'leads',
    resource: mcpUrl(),
  });
  const redirect = await consentOverHttp(authorizationUrl);
  return { issuer, metadata, clientInformation, codeVerifier, redirect };
}

/** An authorization allowed over HTTP (`authorizeOverHttp`) and its code exchanged: the app's tokens. */
async function connectOverHttp() {
  const authorized = await authorizeOverHttp();
  const { issuer, metadata, clientInformation, codeVerifier, redirect } = authorized;
  const tokens = await exchangeAuthorization(issuer, {
    metadata,
    clientInformation,
    authorizationCode: redirect.searchParams.get('code')!,
    codeVerifier,
    redirectUri: callbackUrl,
    resource: mcpUrl(),
  });
  return { ...authorized, tokens };
}

/**
 * Follows an authorization URL as `user`'s browser would, to the consent page's routes: `confirm`
 * posts a body to `/confirm` and, when allowed, follows `returnTo` to where the app is sent back.
 */
async function startConsent(authorizationUrl: URL | string, user: Browser = owner) {
  const jar = new Map<string, string>([['lg_session', user.cookie!]]);
  const visit = async (url: string, init: RequestInit = {}) => {
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as object), cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const at = pair!.indexOf('=');
      jar.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    return res;
  };
  const started = await visit(String(authorizationUrl));
  expect(started.status).toBe(303);
  const interaction = new URL(started.headers.get('location')!, t.url);
  expect(interaction.pathname).toMatch(/^\/oauth\/interaction\/[\w-]+$/);
  const headers = { 'content-type': 'application/json', 'x-csrf-token': user.csrfToken!, origin: t.url };
  return {
    details: async () => (await visit(`${interaction.href}/details`, { headers })).json(),
    confirm: (body: unknown) =>
      visit(`${interaction.href}/confirm`, { method: 'POST', headers, body: JSON.stringify(body) }),
    async allowed(confirmed: Response): Promise<URL> {
      expect(confirmed.status).toBe(200);
      const resumed = await visit((await confirmed.json()).returnTo);
      expect(resumed.status).toBe(303);
      return new URL(resumed.headers.get('location')!);
    },
  };
}

/** Allows an authorization as the owner, for the run and account toolsets, read-only: where the app is sent back. */
async function consentOverHttp(authorizationUrl: URL | string): Promise<URL> {
  const consent = await startConsent(authorizationUrl);
  const accountId: string = (await owner.request('GET', '/auth/session')).body.account.id;
  return consent.allowed(await consent.confirm({ accountId, toolsets: ['account', 'runs'], readOnly: true }));
}

describe('who may connect an app', () => {
  it('owners and admins of the account chosen; a member is refused, and refusals name their field', async () => {
    const issuer = new URL(`${t.url}/oauth`);
    const metadata = (await discoverAuthorizationServerMetadata(issuer)) as AuthorizationServerMetadata;
    const clientInformation = await registerClient(issuer, {
      metadata,
      clientMetadata: new AgentAuth('Member Agent').clientMetadata,
    });
    const { authorizationUrl } = await startAuthorization(issuer, {
      metadata,
      clientInformation,
      redirectUrl: callbackUrl,
      scope: 'leads',
      resource: mcpUrl(),
    });
    // Someone with an account of their own, and a member of the owner's.
    const member = await t.signUp('member@oauth.test', PASSWORD);
    const own: string = (await member.request('GET', '/auth/session')).body.account.id;
    const team: string = (await owner.request('GET', '/auth/session')).body.account.id;
    const userId: string = (await member.request('GET', '/auth/session')).body.user.id;
    await addMembership(t.app.core.db, team, userId, 'member');

    const consent = await startConsent(authorizationUrl, member);
    const pending = await consent.details();
    expect(pending.client).toMatchObject({ name: 'Member Agent', localOnly: true });
    expect(pending.accounts).toEqual([
      expect.objectContaining({ id: own, role: 'owner', mayConnect: true }),
      expect.objectContaining({ id: team, role: 'member', mayConnect: false }),
    ]);
    const asMember = await consent.confirm({ accountId: team, toolsets: ['account'] });
    expect(asMember.status).toBe(403);
    expect((await asMember.json()).error).toMatchObject({
      code: 'role_required',
      message: expect.stringMatching(/^Connecting an app is for the account’s owners and admins/),
    });
    const none = await consent.confirm({ accountId: own, toolsets: [] });
    expect(none.status).toBe(400);
    expect((await none.json()).error.details).toEqual([
      { path: 'toolsets', message: expect.stringMatching(/^choose at least one toolset/) },
    ]);
    const elsewhere = await consent.confirm({ accountId: 'acc_notamember', toolsets: ['account'] });
    expect((await elsewhere.json()).error.details).toEqual([
      { path: 'accountId', message: 'you are not a member of this account' },
    ]);
    // Their own account, where they are the owner: allowed.
    const back = await consent.allowed(await consent.confirm({ accountId: own, toolsets: ['account'] }));
    expect(back.searchParams.get('code')).toBeTruthy();
    const [grant] = await t.app.core.sql`
      select account_id from oauth_grant where client_id = ${clientInformation.client_id}`;
    expect(grant!.account_id).toBe(own);
  });
});

describe('the token rules', () => {
  it('requires PKCE: a code is exchanged only with its verifier', async () => {
    const { issuer, metadata, clientInformation, codeVerifier, redirect } = await authorizeOverHttp();
    const code = redirect.searchParams.get('code')!;
    const exchange = (verifier: string) =>
      exchangeAuthorization(issuer, {
        metadata,
        clientInformation,
        authorizationCode: code,
        codeVerifier: verifier,
        redirectUri: callbackUrl,
        resource: mcpUrl(),
      });
    await expect(exchange('x'.repeat(43))).rejects.toMatchObject({ errorCode: 'invalid_grant' });
    // An authorization request without a code challenge is refused before anyone is asked.
    const noChallenge = new URL(`${t.url}/oauth/auth`);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: clientInformation.client_id,
      redirect_uri: callbackUrl,
      scope: 'leads',
      state: 's',
    }))
      noChallenge.searchParams.set(k, v);
    const refused = await fetch(noChallenge, { redirect: 'manual' });
    expect(refused.status).toBe(303);
    const back = new URL(refused.headers.get('location')!);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('error_description')).toMatch(/PKCE/);
    // With its verifier, the code gives tokens, once.
    expect((await exchange(codeVerifier)).access_token).toBeTruthy();
    await expect(exchange(codeVerifier)).rejects.toMatchObject({ errorCode: 'invalid_grant' });
  });

  it('rotates refresh tokens: each works once, and replaying a used one revokes the connection', async () => {
    const { issuer, metadata, clientInformation, tokens } = await connectOverHttp();
    const refresh = (refreshToken: string) =>
      refreshAuthorization(issuer, { metadata, clientInformation, refreshToken, resource: mcpUrl() });
    const next = await refresh(tokens.refresh_token!);
    expect(next.refresh_token).toBeTruthy();
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
    expect((await mcpPost(`Bearer ${next.access_token}`)).status).toBe(200);
    await expect(refresh(tokens.refresh_token!)).rejects.toMatchObject({ errorCode: 'invalid_grant' });
    // The replay ended the grant: the connection shows revoked, its tokens stop.
    expect((await mcpPost(`Bearer ${next.access_token}`)).status).toBe(401);
    const [grant] = await t.app.core.sql`
      select revoked_at from oauth_grant where client_id = ${clientInformation.client_id}`;
    expect(grant!.revoked_at).not.toBeNull();
  });

  it('issues tokens for the MCP server only, and the MCP server takes none issued for another resource', async () => {
    const { issuer, metadata, clientInformation, codeVerifier, redirect } = await authorizeOverHttp();
    const exchanged = exchangeAuthorization(issuer, {
      metadata,
      clientInformation,
      authorizationCode: redirect.searchParams.get('code')!,
      codeVerifier,
      redirectUri: callbackUrl,
      resource: new URL('https://elsewhere.example/mcp'),
    });
    await expect(exchanged).rejects.toMatchObject({ errorCode: 'invalid_target' });

    const again = await authorizeOverHttp();
    const tokens = await exchangeAuthorization(issuer, {
      metadata: again.metadata,
      clientInformation: again.clientInformation,
      authorizationCode: again.redirect.searchParams.get('code')!,
      codeVerifier: again.codeVerifier,
      redirectUri: callbackUrl,
      resource: mcpUrl(),
    });
    expect((await mcpPost(`Bearer ${tokens.access_token}`)).status).toBe(200);
    // The same token, had it been issued for another resource (its audience), is refused.
    await t.app.core.sql`
      update oauth_artifact set payload = jsonb_set(payload, '{aud}', '"https://elsewhere.example/mcp"')
      where model = 'AccessToken' and grant_id = (
        select id from oauth_grant where client_id = ${again.clientInformation.client_id})`;
    expect((await mcpPost(`Bearer ${tokens.access_token}`)).status).toBe(401);
  });

  it('keeps the grant’s toolsets and read-only mode on the caller', async () => {
    const { clientInformation, tokens } = await connectOverHttp();
    const principal = await t.app.core.auth.authenticate(`Bearer ${tokens.access_token}`, {
      resource: `${t.url}/mcp`,
    });
    expect(principal).toMatchObject({
      keyRole: 'owner',
      oauth: { clientId: clientInformation.client_id, toolsets: ['runs', 'account'], readOnly: true },
    });
    expect(principal.keyId).toBe(principal.oauth!.grantId);
    expect(principal.keyId).toMatch(/^oag_/);
    // The MCP server lists the grant's toolsets, read-only: tools that change nothing.
    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(mcpUrl(), {
        requestInit: { headers: { authorization: `Bearer ${tokens.access_token}` } },
      }),
    );
    clients.push(client);
    const { tools } = await client.listTools({});
    expect(tools.map((tool) => tool.name)).toContain('get_wallet');
    for (const tool of tools) {
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(true);
      expect(['runs', 'account'], tool.name).toContain(MCP_TOOLS.find((known) => known.name === tool.name)?.toolset);
    }
  });
});

describe('client registration', () => {
  const register = (metadata: Record<string, unknown>) =>
    fetch(`${t.url}/oauth/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token_endpoint_auth_method: 'none', client_name: 'Registered', ...metadata }),
    });

  it('takes https redirect URIs, and http ones on this machine only', async () => {
    const remote = await register({ redirect_uris: ['https://agent.example/oauth/callback'] });
    expect(remote.status).toBe(201);
    expect(await remote.json()).toMatchObject({ client_id: expect.any(String), token_endpoint_auth_method: 'none' });
    const plain = await register({ redirect_uris: ['http://agent.example/oauth/callback'] });
    expect(plain.status).toBe(400);
    expect(await plain.json()).toMatchObject({
      error: 'invalid_redirect_uri',
      error_description: expect.stringMatching(/https, or http on a loopback host/),
    });
  });

  it('limits registrations per client address and hour', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 25 && !statuses.includes(429); i++) {
      const res = await register({ redirect_uris: [callbackUrl] });
      statuses.push(res.status);
      if (res.status === 429) {
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
        expect((await res.json()).error_description).toMatch(/^Too many client registrations from your address/);
      } else await res.body?.cancel();
    }
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.filter((status) => status === 201).length).toBeLessThan(20);
  });
});

describe('clients named by their metadata document (Client ID Metadata Documents)', () => {
  /** An agent whose client id is the https URL of its metadata document: it registers nowhere. */
  class DocumentAgent extends AgentAuth {
    constructor(readonly clientMetadataUrl: string) {
      super('Document Agent');
    }
  }
  const publish = (path: string, metadata: Record<string, unknown> = {}) => {
    const url = `${documentBase}${path}`;
    const document = {
      client_id: url,
      client_name: 'Document Agent',
      redirect_uris: [callbackUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...metadata,
    };
    documents.set(path, { body: JSON.stringify(document) });
    return url;
  };
  const clientRows = () =>
    count(t.app.core.sql<{ n: number }[]>`select count(*)::int as n from oauth_artifact where model = 'Client'`);

  it('is advertised, fetched through the outbound guard, named by its host on the consent page, and connects', async () => {
    const metadata = await discoverAuthorizationServerMetadata(new URL(`${t.url}/oauth`));
    expect(metadata).toMatchObject({ client_id_metadata_document_supported: true });

    const clientsBefore = await clientRows();
    const agent = new DocumentAgent(publish('/agents/document-agent.json'));
    const first = new Client({ name: 'cimd-test', version: '1.0.0' });
    await expect(first.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: agent }))).rejects.toThrow(
      UnauthorizedError,
    );
    expect(agent.client?.client_id).toBe(agent.clientMetadataUrl);
    expect(agent.authorizationUrl!.searchParams.get('client_id')).toBe(agent.clientMetadataUrl);

    const before = received.length;
    await page.goto(agent.authorizationUrl!.href);
    await visible(page.getByRole('heading', { name: 'Connect Document Agent' }));
    expect(await page.getByTestId('client-origin').textContent()).toBe(
      `Its name is published by ${new URL(documentBase).host}.`,
    );
    expect(documentsFetched).toContain('/agents/document-agent.json');
    await audit(page);
    await page.getByRole('button', { name: 'Allow' }).click();
    const code = (await callbackAfter(before)).get('code')!;
    await new StreamableHTTPClientTransport(mcpUrl(), { authProvider: agent }).finishAuth(code);
    const client = await connect(agent);
    expect((await client.callTool({ name: 'get_wallet', arguments: {} })).isError).not.toBe(true);
    // Nothing was registered: the document is the client.
    expect(await clientRows()).toBe(clientsBefore);
    const [grant] = await t.app.core
      .sql`select client_name from oauth_grant where client_id = ${agent.clientMetadataUrl}`;
    expect(grant).toEqual({ client_name: 'Document Agent' });
  });

  it('refuses a document that names another client, redirects, or sits on an address the guard refuses', async () => {
    const authorize = (clientId: string) =>
      fetch(
        `${t.url}/oauth/auth?${new URLSearchParams({
          client_id: clientId,
          redirect_uri: callbackUrl,
          response_type: 'code',
          scope: 'leads',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        })}`,
        { redirect: 'manual' },
      );
    const refusal = async (clientId: string) => {
      const res = await authorize(clientId);
      expect(res.status, clientId).toBe(400);
      return res.text();
    };
    const other = publish('/agents/other.json', { client_id: `${documentBase}/agents/someone-else.json` });
    expect(await refusal(other)).toContain('invalid_client');
    const moved = `${documentBase}/agents/moved.json`;
    documents.set('/agents/moved.json', { body: '', status: 302, location: publish('/agents/target.json') });
    expect(await refusal(moved)).toContain('invalid_client');
    // A document on this machine's gateway port: not on the guard's allow list.
    expect(await refusal(`https://127.0.0.1:${new URL(t.url).port}/agents/inside.json`)).toContain('invalid_client');
    expect(documentsFetched).not.toContain('/agents/target.json');
  });
});
