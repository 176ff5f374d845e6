/**
 * Slack through its official client (@slack/web-api): OAuth v2 (code exchange, refresh where token
 * rotation is on), `auth.test`, `auth.revoke`, and `chat.postMessage` for a delivery's summary. Rate
 * limits are Slack's (429 with Retry-After): the client is told to reject them, and this service waits.
 */
import { ErrorCode, WebClient } from '@slack/web-api';
import type { DestinationsConfig, ProviderApp } from '../../config/destinations.ts';
import type { Tokens } from './hubspot.ts';
import { GrantRefused, ProviderUnavailable, Refused, RetryLater } from './types.ts';

type SlackConfig = DestinationsConfig['slack'];

export const SLACK_SCOPES = ['chat:write', 'channels:read'];

const client = (config: SlackConfig, token?: string) =>
  new WebClient(token, {
    slackApiUrl: config.apiBase,
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 0 },
  });

/** Slack's errors that mean the grant is gone. */
const GRANT_GONE = [
  'invalid_auth',
  'token_revoked',
  'token_expired',
  'account_inactive',
  'not_authed',
  'invalid_refresh_token',
];

function classify(err: unknown): Error {
  const e = err as { code?: string; retryAfter?: number; data?: { error?: string }; message?: string };
  if (e?.code === ErrorCode.RateLimitedError)
    return new RetryLater((e.retryAfter ?? 1) * 1000, 'Slack asked to slow down');
  const error = e?.data?.error;
  if (error && GRANT_GONE.includes(error)) return new GrantRefused(`Slack refused the connection (${error})`);
  if (e?.code === ErrorCode.PlatformError) return new Refused(`Slack refused the message (${error})`);
  return new ProviderUnavailable(`Slack could not be reached: ${e?.message ?? String(err)}`);
}

export async function slackTokens(
  config: SlackConfig,
  app: ProviderApp,
  grant: { code: string; redirectUri: string } | { refreshToken: string },
): Promise<Tokens & { externalId: string | null; externalName: string | null; scopes: string | null }> {
  try {
    const answer =
      'code' in grant
        ? await client(config).oauth.v2.access({
            client_id: app.clientId,
            client_secret: app.clientSecret,
            code: grant.code,
            redirect_uri: grant.redirectUri,
          })
        : await client(config).oauth.v2.access({
            client_id: app.clientId,
            client_secret: app.clientSecret,
            grant_type: 'refresh_token',
            refresh_token: grant.refreshToken,
          });
    if (!answer.access_token) throw new GrantRefused('Slack gave no token');
    return {
      accessToken: answer.access_token,
      refreshToken: answer.refresh_token ?? null,
      expiresAt: answer.expires_in ? new Date(Date.now() + answer.expires_in * 1000) : null,
      externalId: answer.team?.id ?? null,
      externalName: answer.team?.name ?? null,
      scopes: answer.scope ?? null,
    };
  } catch (err) {
    const classified = classify(err);
    // A code Slack does not take (invalid_code, bad_redirect_uri…) is the grant refused.
    throw classified instanceof ProviderUnavailable || classified instanceof RetryLater
      ? classified
      : new GrantRefused(classified.message);
  }
}

/** The workspace a bot token belongs to. */
export async function slackWhoAmI(config: SlackConfig, token: string) {
  try {
    const answer = await client(config, token).auth.test();
    return { externalId: answer.team_id ?? null, externalName: answer.team ?? null };
  } catch (err) {
    throw classify(err);
  }
}

export async function revokeSlack(config: SlackConfig, token: string) {
  try {
    await client(config, token).auth.revoke();
  } catch (err) {
    const classified = classify(err);
    if (classified instanceof GrantRefused) return;
    throw classified;
  }
}

/** Posts a message to a channel (a delivery's summary). */
export async function postSlackMessage(config: SlackConfig, token: string, channel: string, text: string) {
  try {
    await client(config, token).chat.postMessage({ channel, text, unfurl_links: false });
  } catch (err) {
    throw classify(err);
  }
}
