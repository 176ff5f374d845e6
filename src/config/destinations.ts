import { parseSecretKeys, type SecretKey } from '../destinations/secrets.ts';

/** A provider app registered by the operator for the OAuth authorization-code flow. */
export interface ProviderApp {
  clientId: string;
  clientSecret: string;
}

/**
 * Destinations (docs/destinations.md): the key that seals provider tokens, and each provider's app and
 * addresses. `*_BASE_URL` are for tests only: a local fake in place of the provider.
 */
export interface DestinationsConfig {
  /** SECRETS_KEYS; empty: a key derived from the installation's secret (the embedded database only). */
  secretKeys: SecretKey[];
  hubspot: { app?: ProviderApp; apiBase: string; authorizeUrl: string };
  salesforce: { app?: ProviderApp; loginUrl: string };
  google: {
    app?: ProviderApp;
    authorizeUrl: string;
    tokenUrl: string;
    revokeUrl: string;
    tokenInfoUrl: string;
    sheetsRoot: string;
  };
  slack: { app?: ProviderApp; apiBase: string; authorizeUrl: string };
}

const app = (env: NodeJS.ProcessEnv, prefix: string): ProviderApp | undefined => {
  const clientId = env[`${prefix}_CLIENT_ID`];
  const clientSecret = env[`${prefix}_CLIENT_SECRET`];
  if (!clientId && !clientSecret) return undefined;
  if (!clientId || !clientSecret) throw new Error(`${prefix}_CLIENT_ID and ${prefix}_CLIENT_SECRET go together`);
  return { clientId, clientSecret };
};

const base = (value: string | undefined, name: string): string | undefined => {
  if (!value) return undefined;
  const url = new URL(value);
  if (!['http:', 'https:'].includes(url.protocol)) throw new Error(`${name} must be an http(s) URL`);
  return value.replace(/\/$/, '');
};

export function destinations(env: NodeJS.ProcessEnv): DestinationsConfig {
  const secretKeys = env.SECRETS_KEYS ? parseSecretKeys(env.SECRETS_KEYS) : [];
  const hubspot = base(env.HUBSPOT_BASE_URL, 'HUBSPOT_BASE_URL');
  const slack = base(env.SLACK_BASE_URL, 'SLACK_BASE_URL');
  const google = base(env.GOOGLE_BASE_URL, 'GOOGLE_BASE_URL');
  return {
    secretKeys,
    hubspot: {
      app: app(env, 'HUBSPOT'),
      apiBase: hubspot ?? 'https://api.hubapi.com',
      authorizeUrl: hubspot ? `${hubspot}/oauth/authorize` : 'https://app.hubspot.com/oauth/authorize',
    },
    salesforce: {
      app: app(env, 'SALESFORCE'),
      loginUrl: base(env.SALESFORCE_LOGIN_URL, 'SALESFORCE_LOGIN_URL') ?? 'https://login.salesforce.com',
    },
    google: {
      app: app(env, 'GOOGLE'),
      authorizeUrl: google ? `${google}/o/oauth2/v2/auth` : 'https://accounts.google.com/o/oauth2/v2/auth',
      tokenUrl: google ? `${google}/token` : 'https://oauth2.googleapis.com/token',
      revokeUrl: google ? `${google}/revoke` : 'https://oauth2.googleapis.com/revoke',
      tokenInfoUrl: google ? `${google}/tokeninfo` : 'https://oauth2.googleapis.com/tokeninfo',
      sheetsRoot: google ? `${google}/` : 'https://sheets.googleapis.com/',
    },
    slack: {
      app: app(env, 'SLACK'),
      apiBase: slack ? `${slack}/api/` : 'https://slack.com/api/',
      authorizeUrl: slack ? `${slack}/oauth/v2/authorize` : 'https://slack.com/oauth/v2/authorize',
    },
  };
}
