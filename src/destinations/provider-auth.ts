/**
 * How each provider grants access, in one table: the authorization URL of its OAuth flow (scopes and
 * the parameters it needs), the code exchange, the refresh of an access token, the check of a token it
 * issues to be pasted (HubSpot private-app tokens, Slack bot tokens, Google service-account keys), and
 * the revocation on disconnect. connections.ts is the same for every provider; it reads this.
 */
import type { DestinationsConfig, ProviderApp } from '../config/destinations.ts';
import type { Provider } from '../../db/tables/destinations.ts';
import {
  checkServiceAccount,
  GOOGLE_SCOPES,
  googleTokens,
  googleWhoAmI,
  parseServiceAccountKey,
  revokeGoogle,
} from './providers/google.ts';
import {
  checkHubspotToken,
  HUBSPOT_SCOPES,
  hubspotTokens,
  hubspotWhoAmI,
  revokeHubspot,
  type Tokens,
} from './providers/hubspot.ts';
import { revokeSalesforce, SALESFORCE_SCOPES, salesforceTokens } from './providers/salesforce.ts';
import { revokeSlack, SLACK_SCOPES, slackTokens, slackWhoAmI } from './providers/slack.ts';

/** Tokens granted, and who they belong to at the provider. */
export type Granted = Tokens & {
  externalId: string | null;
  externalName: string | null;
  scopes: string | null;
  instanceUrl?: string | null;
};

/** A token the account pasted, checked: who it is, or what is wrong with it (said at the field). */
export type CheckedToken =
  | { externalId: string | null; externalName: string | null; scopes?: string | null; refused?: undefined }
  | { refused: string };

interface ProviderAuth {
  /** What a pasted token is, for the form's help (null: this provider connects by signing in only). */
  token: string | null;
  /** The authorization URL's parameters besides client_id, redirect_uri and state. */
  authorizeParams(config: DestinationsConfig): { url: string; params: Record<string, string> };
  exchange(
    config: DestinationsConfig,
    app: ProviderApp,
    grant: { code: string; redirectUri: string },
  ): Promise<Granted>;
  /** A new access token from the refresh token (null: the provider's client refreshes by itself). */
  refresh: ((config: DestinationsConfig, app: ProviderApp, refreshToken: string) => Promise<Tokens>) | null;
  checkToken(config: DestinationsConfig, token: string): Promise<CheckedToken>;
  revoke(
    config: DestinationsConfig,
    app: ProviderApp | undefined,
    tokens: { accessToken: string; refreshToken: string | null; method: 'oauth' | 'token' },
  ): Promise<void>;
}

const signInOnly = async (): Promise<CheckedToken> => ({ refused: 'this provider connects by signing in only' });

export const PROVIDER_AUTH = {
  hubspot: {
    token: 'a private-app token (pat-…)',
    authorizeParams: (c) => ({ url: c.hubspot.authorizeUrl, params: { scope: HUBSPOT_SCOPES.join(' ') } }),
    async exchange(c, app, grant) {
      const got = await hubspotTokens(c.hubspot, app, grant);
      return { ...got, ...(await hubspotWhoAmI(c.hubspot, got.accessToken)) };
    },
    refresh: (c, app, refreshToken) => hubspotTokens(c.hubspot, app, { refreshToken }),
    async checkToken(c, token) {
      await checkHubspotToken(c.hubspot, token);
      return { externalId: null, externalName: 'private app' };
    },
    async revoke(c, _app, tokens) {
      if (tokens.refreshToken) await revokeHubspot(c.hubspot, tokens.refreshToken);
    },
  },
  slack: {
    token: 'a bot token (xoxb-…)',
    authorizeParams: (c) => ({ url: c.slack.authorizeUrl, params: { scope: SLACK_SCOPES.join(',') } }),
    exchange: (c, app, grant) => slackTokens(c.slack, app, grant),
    refresh: (c, app, refreshToken) => slackTokens(c.slack, app, { refreshToken }),
    checkToken: (c, token) => slackWhoAmI(c.slack, token),
    revoke: (c, _app, tokens) => revokeSlack(c.slack, tokens.accessToken),
  },
  salesforce: {
    token: null,
    authorizeParams: (c) => ({
      url: `${c.salesforce.loginUrl}/services/oauth2/authorize`,
      params: { response_type: 'code', scope: SALESFORCE_SCOPES.join(' ') },
    }),
    exchange: (c, app, grant) => salesforceTokens(c.salesforce, app, grant),
    // jsforce refreshes a session Salesforce refuses, and the connection keeps the new token.
    refresh: null,
    checkToken: signInOnly,
    async revoke(c, app, tokens) {
      if (tokens.refreshToken) await revokeSalesforce(c.salesforce, app, tokens.refreshToken);
    },
  },
  google: {
    token: 'a service account’s key file (JSON), shared on the spreadsheet',
    authorizeParams: (c) => ({
      url: c.google.authorizeUrl,
      // Offline access with consent asked each time: Google gives a refresh token only so.
      params: {
        response_type: 'code',
        scope: GOOGLE_SCOPES.join(' '),
        access_type: 'offline',
        prompt: 'consent',
        include_granted_scopes: 'true',
      },
    }),
    async exchange(c, app, grant) {
      const got = await googleTokens(c.google, app, grant);
      return { ...got, ...(await googleWhoAmI(c.google, app, got.accessToken)) };
    },
    refresh: (c, app, refreshToken) => googleTokens(c.google, app, { refreshToken }),
    async checkToken(c, token) {
      const key = parseServiceAccountKey(token);
      if (typeof key === 'string') return { refused: key };
      await checkServiceAccount(c.google, key);
      return { externalId: key.client_email, externalName: key.client_email };
    },
    async revoke(c, app, tokens) {
      // A service account's key is the operator's at Google: nothing to revoke here.
      if (tokens.method === 'oauth') await revokeGoogle(c.google, app, tokens.refreshToken ?? tokens.accessToken);
    },
  },
} as const satisfies Record<Exclude<Provider, never>, ProviderAuth>;

export type Connectable = keyof typeof PROVIDER_AUTH;
export const CONNECTABLE = Object.keys(PROVIDER_AUTH) as [Connectable, ...Connectable[]];
/** Providers a pasted token connects. */
export const BY_TOKEN = CONNECTABLE.filter((p) => PROVIDER_AUTH[p].token !== null);
