import { randomBytes, randomInt } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local Slack: the OAuth v2 install flow and the Web API methods a destination needs, for the official
 * `@slack/web-api` WebClient to talk to (`slackApiUrl: <url>/api/`). Every rule is from Slack's published
 * method reference (docs.slack.dev/reference/methods, as captured in slack-ruby/slack-api-ref) and its
 * guides; test/fixtures/slack/SOURCES.md names each one and test/fakes/slack.test.ts checks the answers
 * against the fixtures there.
 *
 * - `GET /oauth/v2/authorize` consents at once: 302 to the `redirect_uri` (one the app registered; the
 *   first when none is given) with `code` and `state`. An unknown `client_id` or an unregistered
 *   `redirect_uri` is an error page, as Slack shows it; `consent: 'deny'` redirects with
 *   `error=access_denied`.
 * - `POST /api/oauth.v2.access`: the client authenticated by HTTP Basic or `client_id`/`client_secret`
 *   (`invalid_client_id`, `bad_client_secret`); a code is good once for 10 minutes (`invalid_code`), with
 *   the `redirect_uri` of the authorization when it had one (`bad_redirect_uri`). The answer is the
 *   reference's: `{ok, access_token: 'xoxb-…', token_type: 'bot', scope, bot_user_id, app_id, team,
 *   enterprise, authed_user, is_enterprise_install}`. With `tokenRotation`, tokens are `xoxe.xoxb-…`
 *   with `expires_in` (43200) and a `refresh_token` (`xoxe-1-…`); `grant_type=refresh_token` answers a new
 *   access token and a new refresh token, the old refresh token being spent (`invalid_refresh_token`).
 * - `auth.test`, `auth.revoke` (`{ok, revoked}`; `test=1` revokes nothing), `conversations.list`
 *   (`types`, `exclude_archived`, `limit` under 1000, `cursor`), `chat.postMessage` (`channel` as an ID or
 *   a name, `text`, `blocks`, `thread_ts`): `{ok, channel, ts, message}`.
 * - Errors are HTTP 200 with `{ok: false, error}`, as Slack answers them: `not_authed` (no token),
 *   `invalid_auth` (an unknown token), `token_revoked`, `token_expired` (rotation), `missing_scope` (with
 *   `needed` and `provided`), `channel_not_found`, `not_in_channel` (a public channel the bot is not in,
 *   without `chat:write.public`), `is_archived`, `no_text`, `msg_too_long` (text over `maxTextLength`),
 *   `invalid_blocks_format` (blocks not a JSON array), `invalid_blocks` (a block Block Kit refuses: an
 *   unknown type, empty or over-long text, over 50 blocks), `invalid_post_type`/`missing_post_type`.
 * - Rate limits: chat.postMessage allows about 1 message per second per channel with short bursts (a
 *   token bucket: `postMessageBurst` messages, refilled at `postMessagePerSecond`); conversations.list is
 *   Tier 2 (20 a minute) and auth.revoke Tier 3 (50 a minute). Over the limit: HTTP 429, `Retry-After` in
 *   seconds, `{ok: false, error: 'ratelimited'}` (fixtures/slack/rate-limited.json).
 * - Bodies: `application/x-www-form-urlencoded` (the token as `token` or a Bearer header; JSON arguments
 *   such as `blocks` as JSON strings) or `application/json` (the token only as a Bearer header), plus
 *   query-string arguments; the WebClient always posts the form with a Bearer header.
 *
 * Not modelled: user tokens beyond what oauth.v2.access issues, multipart bodies, attachments, threads
 * beyond storing `thread_ts`, the workspace-wide posting limit, message truncation.
 */

export interface FakeChannel {
  id: string;
  name: string;
  isPrivate: boolean;
  isArchived: boolean;
  /** Whether the app's bot user is in the channel. */
  isMember: boolean;
  created: number;
}

export interface PostedMessage {
  channel: string;
  ts: string;
  text: string | undefined;
  blocks: unknown[] | undefined;
  threadTs: string | undefined;
  token: string;
}

export interface FakeSlackOptions {
  clientId?: string;
  clientSecret?: string;
  /** The app's redirect URLs; `<url>/slack/callback` when none is given. */
  redirectUris?: string[];
  /** Token rotation on: expiring `xoxe.` tokens and refresh tokens. */
  tokenRotation?: boolean;
  /** Seconds an access token lasts with rotation (Slack: 12 hours). */
  accessTokenLifetime?: number;
  team?: { id: string; name: string; domain: string };
  channels?: Partial<FakeChannel>[];
  /** chat.postMessage: messages per second per channel, and the burst allowed. */
  postMessagePerSecond?: number;
  postMessageBurst?: number;
  /** Longest `text` chat.postMessage takes before `msg_too_long`. */
  maxTextLength?: number;
  /** Per-minute limits of tiered methods, by method. */
  tierLimits?: Record<string, number>;
}

interface Token {
  token: string;
  kind: 'bot' | 'user';
  userId: string;
  scopes: string[];
  expiresAt: number | null;
  revoked: boolean;
}

interface Code {
  clientId: string;
  redirectUri: string | null;
  scopes: string[];
  userScopes: string[];
  expiresAt: number;
  used: boolean;
}

export interface SlackRequest {
  method: string;
  httpMethod: string;
  contentType: string;
  status: number;
  error: string | null;
  args: Record<string, unknown>;
}

export interface FakeSlack {
  url: string;
  /** For `new WebClient(token, { slackApiUrl })`. */
  apiUrl: string;
  authorizeUrl: string;
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  team: { id: string; name: string; domain: string };
  appId: string;
  botUserId: string;
  botId: string;
  channels: Map<string, FakeChannel>;
  messages: PostedMessage[];
  requests: SlackRequest[];
  consent: 'grant' | 'deny';
  /** A bot token as an install would give it, without the OAuth round trip. */
  issueBotToken(scopes?: string[]): string;
  addChannel(init: Partial<FakeChannel> & { name: string }): FakeChannel;
  /** The next `times` calls of `method` answer 429 with `Retry-After: retryAfter`. */
  rateLimit(method: string, options?: { times?: number; retryAfter?: number }): void;
  /** Every access token issued so far expires now (rotation). */
  expireTokens(): void;
  revokeToken(token: string): void;
  close(): Promise<void>;
}

class SlackError {
  constructor(
    readonly error: string,
    readonly extra: Record<string, unknown> = {},
  ) {}
}

class RateLimited {
  constructor(readonly retryAfter: number) {}
}

const upper = (n: number) =>
  Array.from({ length: n }, () => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'[randomInt(36)]).join('');
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** Scopes each method needs (the reference's "Scopes" of each method). */
const NEEDED: Record<string, string[][]> = {
  'chat.postMessage': [['chat:write']],
  'conversations.list': [['channels:read', 'groups:read', 'im:read', 'mpim:read']],
};

const TEXT_TYPES = new Set(['plain_text', 'mrkdwn']);

/** Block Kit limits (docs.slack.dev/reference/block-kit/blocks). Returns the first problem, or null. */
function blockProblem(blocks: unknown[]): string | null {
  if (blocks.length > 50) return 'no more than 50 items allowed [json-pointer:/blocks]';
  for (const [i, raw] of blocks.entries()) {
    const at = `/blocks/${i}`;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return `expected object [json-pointer:${at}]`;
    const block = raw as Record<string, unknown>;
    const text = (value: unknown, path: string, max: number, plainOnly = false): string | null => {
      const t = value as { type?: unknown; text?: unknown } | undefined;
      if (!t || typeof t !== 'object') return `must provide an object [json-pointer:${path}]`;
      if (typeof t.type !== 'string' || !TEXT_TYPES.has(t.type) || (plainOnly && t.type !== 'plain_text')) {
        return `must be a valid enum value [json-pointer:${path}/type]`;
      }
      if (typeof t.text !== 'string' || t.text.length === 0)
        return `must be more than 0 characters [json-pointer:${path}/text]`;
      if (t.text.length > max) return `must be less than ${max + 1} characters [json-pointer:${path}/text]`;
      return null;
    };
    switch (block.type) {
      case 'section': {
        if (block.text === undefined && block.fields === undefined) {
          return `must provide either 'text' or 'fields' [json-pointer:${at}]`;
        }
        if (block.text !== undefined) {
          const problem = text(block.text, `${at}/text`, 3000);
          if (problem) return problem;
        }
        if (block.fields !== undefined) {
          if (!Array.isArray(block.fields) || block.fields.length > 10) {
            return `no more than 10 items allowed [json-pointer:${at}/fields]`;
          }
          for (const [j, field] of block.fields.entries()) {
            const problem = text(field, `${at}/fields/${j}`, 2000);
            if (problem) return problem;
          }
        }
        break;
      }
      case 'header': {
        const problem = text(block.text, `${at}/text`, 150, true);
        if (problem) return problem;
        break;
      }
      case 'markdown':
        if (typeof block.text !== 'string' || block.text.length === 0) {
          return `must be more than 0 characters [json-pointer:${at}/text]`;
        }
        if (block.text.length > 12000) return `must be less than 12001 characters [json-pointer:${at}/text]`;
        break;
      case 'context':
        if (!Array.isArray(block.elements) || block.elements.length === 0 || block.elements.length > 10) {
          return `must provide between 1 and 10 items [json-pointer:${at}/elements]`;
        }
        break;
      case 'actions':
      case 'rich_text':
        if (!Array.isArray(block.elements) || block.elements.length === 0) {
          return `must provide at least 1 item [json-pointer:${at}/elements]`;
        }
        break;
      case 'image':
        if (typeof block.image_url !== 'string' && block.slack_file === undefined) {
          return `must provide 'image_url' or 'slack_file' [json-pointer:${at}]`;
        }
        if (typeof block.alt_text !== 'string') return `must provide a string [json-pointer:${at}/alt_text]`;
        break;
      case 'divider':
        break;
      default:
        return `must be a valid enum value [json-pointer:${at}/type]`;
    }
  }
  return null;
}

export async function startFakeSlack(options: FakeSlackOptions = {}): Promise<FakeSlack> {
  const rotation = options.tokenRotation ?? false;
  const lifetime = options.accessTokenLifetime ?? 43_200;
  const perSecond = options.postMessagePerSecond ?? 1;
  const burst = options.postMessageBurst ?? 5;
  const maxText = options.maxTextLength ?? 4000;
  const tiers: Record<string, number> = {
    'conversations.list': 20,
    'auth.revoke': 50,
    ...options.tierLimits,
  };
  const team = options.team ?? { id: `T${upper(10)}`, name: 'Leadgate Test', domain: 'leadgate-test' };
  const appId = `A${upper(10)}`;
  const botUserId = `U${upper(10)}`;
  const botId = `B${upper(10)}`;
  const installerId = `U${upper(10)}`;
  const clientId = options.clientId ?? `${randomInt(1e9, 9e9)}.${randomInt(1e11, 9e11)}`;
  const clientSecret = options.clientSecret ?? hex(16);

  const tokens = new Map<string, Token>();
  const refreshTokens = new Map<string, Token & { spent: boolean }>();
  const codes = new Map<string, Code>();
  const channels = new Map<string, FakeChannel>();
  const messages: PostedMessage[] = [];
  const requests: SlackRequest[] = [];
  const buckets = new Map<string, { tokens: number; at: number }>();
  const windows = new Map<string, number[]>();
  const forced = new Map<string, { times: number; retryAfter: number }>();
  let lastTs = 0;

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ ok: false, error: 'fatal_error', detail: String(err) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const redirectUris = options.redirectUris ?? [`${url}/slack/callback`];

  const addChannel = (init: Partial<FakeChannel> & { name: string }): FakeChannel => {
    const channel: FakeChannel = {
      id: init.id ?? `C${upper(10)}`,
      name: init.name,
      isPrivate: init.isPrivate ?? false,
      isArchived: init.isArchived ?? false,
      isMember: init.isMember ?? false,
      created: init.created ?? Math.floor(Date.now() / 1000) - 86_400,
    };
    channels.set(channel.id, channel);
    return channel;
  };
  for (const init of options.channels ?? [
    { name: 'general', isMember: true },
    { name: 'random', isMember: false },
  ]) {
    addChannel({ name: 'channel', ...init });
  }

  function issue(kind: 'bot' | 'user', scopes: string[], userId: string): { access: Token; refresh: string | null } {
    const prefix = kind === 'bot' ? 'xoxb' : 'xoxp';
    const body = `${randomInt(1e11, 9e11)}-${randomInt(1e11, 9e11)}-${randomBytes(18).toString('base64url')}`;
    const access: Token = {
      token: rotation ? `xoxe.${prefix}-1-${body}` : `${prefix}-${body}`,
      kind,
      userId,
      scopes,
      expiresAt: rotation ? Date.now() + lifetime * 1000 : null,
      revoked: false,
    };
    tokens.set(access.token, access);
    let refresh: string | null = null;
    if (rotation) {
      refresh = `xoxe-1-${randomBytes(48).toString('base64url')}`;
      refreshTokens.set(refresh, { ...access, token: refresh, spent: false });
    }
    return { access, refresh };
  }

  function authenticate(token: string | undefined): Token {
    if (!token) throw new SlackError('not_authed');
    const found = tokens.get(token);
    if (!found) throw new SlackError('invalid_auth');
    if (found.revoked) throw new SlackError('token_revoked');
    if (found.expiresAt !== null && found.expiresAt <= Date.now()) throw new SlackError('token_expired');
    return found;
  }

  function requireScope(method: string, token: Token) {
    for (const anyOf of NEEDED[method] ?? []) {
      if (!anyOf.some((scope) => token.scopes.includes(scope))) {
        throw new SlackError('missing_scope', { needed: anyOf.join(','), provided: token.scopes.join(',') });
      }
    }
  }

  function rateLimit(key: string, method: string) {
    const now = Date.now();
    const force = forced.get(method);
    if (force && force.times > 0) {
      force.times--;
      throw new RateLimited(force.retryAfter);
    }
    if (method === 'chat.postMessage') {
      const bucket = buckets.get(key) ?? { tokens: burst, at: now };
      bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
      bucket.at = now;
      buckets.set(key, bucket);
      if (bucket.tokens < 1) throw new RateLimited(Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)));
      bucket.tokens -= 1;
      return;
    }
    const limit = tiers[method];
    if (limit === undefined) return;
    const times = (windows.get(key) ?? []).filter((t) => t > now - 60_000);
    windows.set(key, times);
    if (times.length >= limit) throw new RateLimited(Math.max(1, Math.ceil((times[0]! + 60_000 - now) / 1000)));
    times.push(now);
  }

  function nextTs(): string {
    const micros = Math.max(Date.now() * 1000, lastTs + 1);
    lastTs = micros;
    return `${Math.floor(micros / 1e6)}.${String(micros % 1e6).padStart(6, '0')}`;
  }

  const truthy = (value: unknown) => value === true || value === 'true' || value === '1' || value === 1;

  function findChannel(ref: unknown, token: Token): FakeChannel {
    if (typeof ref !== 'string' || ref === '') throw new SlackError('channel_not_found');
    const name = ref.replace(/^#/, '');
    const channel = channels.get(ref) ?? [...channels.values()].find((c) => c.name === name);
    // A private channel the bot is not in is invisible to it.
    if (!channel || (channel.isPrivate && !channel.isMember && token.kind === 'bot')) {
      throw new SlackError('channel_not_found');
    }
    return channel;
  }

  function channelObject(channel: FakeChannel) {
    return {
      id: channel.id,
      name: channel.name,
      is_channel: !channel.isPrivate,
      is_group: channel.isPrivate,
      is_im: false,
      is_mpim: false,
      is_private: channel.isPrivate,
      created: channel.created,
      is_archived: channel.isArchived,
      is_general: channel.name === 'general',
      unlinked: 0,
      name_normalized: channel.name,
      is_shared: false,
      is_org_shared: false,
      is_pending_ext_shared: false,
      pending_shared: [],
      context_team_id: team.id,
      updated: channel.created * 1000,
      parent_conversation: null,
      creator: installerId,
      is_ext_shared: false,
      shared_team_ids: [team.id],
      pending_connected_team_ids: [],
      is_member: channel.isMember,
      topic: { value: '', creator: '', last_set: 0 },
      purpose: { value: '', creator: '', last_set: 0 },
      previous_names: [],
      num_members: channel.isMember ? 2 : 1,
    };
  }

  function oauthAccess(args: Record<string, unknown>, authorization: string | undefined) {
    let id = typeof args.client_id === 'string' ? args.client_id : undefined;
    let secret = typeof args.client_secret === 'string' ? args.client_secret : undefined;
    if (authorization?.startsWith('Basic ')) {
      const [user, pass] = Buffer.from(authorization.slice(6), 'base64').toString('utf8').split(':');
      id = user;
      secret = pass;
    }
    if (id !== clientId) throw new SlackError('invalid_client_id');
    if (secret !== clientSecret) throw new SlackError('bad_client_secret');
    const grantType = args.grant_type ?? 'authorization_code';
    let scopes: string[];
    let userScopes: string[];
    if (grantType === 'authorization_code') {
      const code = codes.get(typeof args.code === 'string' ? args.code : '');
      if (!code || code.used || code.expiresAt < Date.now() || code.clientId !== id)
        throw new SlackError('invalid_code');
      if (code.redirectUri !== null && args.redirect_uri !== code.redirectUri) throw new SlackError('bad_redirect_uri');
      code.used = true;
      scopes = code.scopes;
      userScopes = code.userScopes;
    } else if (grantType === 'refresh_token') {
      const old = refreshTokens.get(typeof args.refresh_token === 'string' ? args.refresh_token : '');
      if (!rotation || !old || old.spent || old.revoked) throw new SlackError('invalid_refresh_token');
      old.spent = true;
      const { access, refresh } = issue(old.kind, old.scopes, old.userId);
      return {
        ok: true,
        app_id: appId,
        ...(old.kind === 'bot' ? { bot_user_id: botUserId } : { user_id: old.userId }),
        access_token: access.token,
        token_type: old.kind,
        scope: old.scopes.join(','),
        expires_in: lifetime,
        refresh_token: refresh,
        team: { id: team.id, name: team.name },
        enterprise: null,
        is_enterprise_install: false,
      };
    } else {
      throw new SlackError('invalid_grant_type');
    }
    const bot = scopes.length > 0 ? issue('bot', scopes, botUserId) : null;
    const human = userScopes.length > 0 ? issue('user', userScopes, installerId) : null;
    return {
      ok: true,
      app_id: appId,
      authed_user: human
        ? {
            id: installerId,
            scope: userScopes.join(','),
            access_token: human.access.token,
            token_type: 'user',
            ...(rotation ? { expires_in: lifetime, refresh_token: human.refresh } : {}),
          }
        : { id: installerId },
      ...(bot
        ? {
            scope: scopes.join(','),
            token_type: 'bot',
            access_token: bot.access.token,
            bot_user_id: botUserId,
            ...(rotation ? { expires_in: lifetime, refresh_token: bot.refresh } : {}),
          }
        : {}),
      team: { id: team.id, name: team.name },
      enterprise: null,
      is_enterprise_install: false,
    };
  }

  /** One Web API method: the answer, or throws SlackError / RateLimited. */
  function call(method: string, args: Record<string, unknown>, token: string | undefined, authorization?: string) {
    if (method === 'oauth.v2.access') return oauthAccess(args, authorization);
    const known = ['auth.test', 'auth.revoke', 'conversations.list', 'chat.postMessage'];
    if (!known.includes(method)) throw new SlackError('unknown_method', { req_method: method });
    const caller = authenticate(token);
    requireScope(method, caller);
    switch (method) {
      case 'auth.test':
        return {
          ok: true,
          url: `https://${team.domain}.slack.com/`,
          team: team.name,
          user: caller.kind === 'bot' ? 'leadgate' : 'installer',
          team_id: team.id,
          user_id: caller.userId,
          ...(caller.kind === 'bot' ? { bot_id: botId } : {}),
          is_enterprise_install: false,
        };
      case 'auth.revoke': {
        rateLimit(`${caller.token} auth.revoke`, method);
        const test = truthy(args.test);
        if (!test) caller.revoked = true;
        return { ok: true, revoked: !test };
      }
      case 'conversations.list': {
        rateLimit(`${caller.token} conversations.list`, method);
        const types = String(args.types ?? 'public_channel').split(',');
        const allowed = ['public_channel', 'private_channel', 'mpim', 'im'];
        if (types.some((t) => !allowed.includes(t.trim()))) throw new SlackError('invalid_types');
        const limit = args.limit === undefined ? 100 : Number(args.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit >= 1000) throw new SlackError('invalid_limit');
        let start = 0;
        if (args.cursor !== undefined && args.cursor !== '') {
          const decoded = /^dGVhbTp/.test(String(args.cursor))
            ? Buffer.from(String(args.cursor), 'base64').toString()
            : '';
          const id = decoded.startsWith('team:') ? decoded.slice(5) : '';
          const all = [...channels.keys()];
          start = all.indexOf(id);
          if (start < 0) throw new SlackError('invalid_cursor');
        }
        const visible = [...channels.values()].filter(
          (c) =>
            (c.isPrivate ? types.includes('private_channel') && c.isMember : types.includes('public_channel')) &&
            !(truthy(args.exclude_archived) && c.isArchived),
        );
        const ordered = [...channels.values()].slice(start).filter((c) => visible.includes(c));
        const page = ordered.slice(0, limit);
        const next = ordered[limit];
        return {
          ok: true,
          channels: page.map(channelObject),
          response_metadata: { next_cursor: next ? Buffer.from(`team:${next.id}`).toString('base64') : '' },
        };
      }
      case 'chat.postMessage': {
        const channel = findChannel(args.channel, caller);
        rateLimit(`${team.id} ${channel.id} chat.postMessage`, method);
        if (channel.isArchived) throw new SlackError('is_archived');
        if (!channel.isMember && caller.kind === 'bot' && !caller.scopes.includes('chat:write.public')) {
          throw new SlackError('not_in_channel');
        }
        let blocks: unknown[] | undefined;
        if (args.blocks !== undefined && args.blocks !== '') {
          let parsed: unknown = args.blocks;
          if (typeof parsed === 'string') {
            try {
              parsed = JSON.parse(parsed);
            } catch {
              throw new SlackError('invalid_blocks_format');
            }
          }
          if (!Array.isArray(parsed)) throw new SlackError('invalid_blocks_format');
          const problem = blockProblem(parsed);
          if (problem) {
            throw new SlackError('invalid_blocks', {
              errors: [problem],
              response_metadata: { messages: [`[ERROR] ${problem}`] },
            });
          }
          blocks = parsed;
        }
        const text = typeof args.text === 'string' && args.text !== '' ? args.text : undefined;
        if (text === undefined && blocks === undefined && args.attachments === undefined)
          throw new SlackError('no_text');
        if (text !== undefined && text.length > maxText) throw new SlackError('msg_too_long');
        const ts = nextTs();
        const threadTs = typeof args.thread_ts === 'string' ? args.thread_ts : undefined;
        messages.push({ channel: channel.id, ts, text, blocks, threadTs, token: caller.token });
        return {
          ok: true,
          channel: channel.id,
          ts,
          message: {
            user: caller.userId,
            type: 'message',
            ts,
            ...(caller.kind === 'bot' ? { bot_id: botId, app_id: appId } : {}),
            text: text ?? '',
            team: team.id,
            ...(blocks ? { blocks } : {}),
            ...(threadTs ? { thread_ts: threadTs } : {}),
          },
        };
      }
    }
    throw new SlackError('unknown_method', { req_method: method });
  }

  function authorize(query: URLSearchParams, res: ServerResponse) {
    const page = (status: number, message: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!DOCTYPE html><title>Slack</title><h1>Oops, something went wrong</h1><p>${message}</p>`);
    };
    if (query.get('client_id') !== clientId) return page(400, 'Invalid client_id parameter');
    const given = query.get('redirect_uri');
    if (given !== null && !redirectUris.includes(given))
      return page(400, 'redirect_uri did not match any configured URIs.');
    const scopes = (query.get('scope') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const userScopes = (query.get('user_scope') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const target = new URL(given ?? redirectUris[0]!);
    const state = query.get('state');
    if (scopes.length === 0 && userScopes.length === 0) target.searchParams.set('error', 'invalid_scope');
    else if (fake.consent === 'deny') target.searchParams.set('error', 'access_denied');
    else {
      const code = `${team.id.slice(1)}.${randomInt(1e12, 9e12)}.${hex(32)}`;
      codes.set(code, {
        clientId,
        redirectUri: given,
        scopes,
        userScopes,
        expiresAt: Date.now() + 600_000,
        used: false,
      });
      target.searchParams.set('code', code);
    }
    if (state !== null) target.searchParams.set('state', state);
    res.writeHead(302, { location: target.toString() });
    res.end();
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const parsed = new URL(req.url ?? '/', url);
    if (parsed.pathname === '/oauth/v2/authorize' && req.method === 'GET') return authorize(parsed.searchParams, res);
    const apiMatch = /^\/api\/([A-Za-z0-9_.]+)$/.exec(parsed.pathname);
    if (!apiMatch) {
      res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' });
      return res.end('<h1>Not Found</h1>');
    }
    const method = apiMatch[1]!;
    const contentType = (req.headers['content-type'] ?? '').toLowerCase();
    const log: SlackRequest = {
      method,
      httpMethod: req.method ?? 'GET',
      contentType,
      status: 200,
      error: null,
      args: {},
    };
    requests.push(log);
    const send = (status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
      log.status = status;
      log.error = body.ok === false ? String(body.error) : null;
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
      res.end(JSON.stringify(body));
    };
    const authorization = req.headers.authorization;
    const bearer = authorization?.startsWith('Bearer ') ? authorization.slice(7).trim() : undefined;
    const args: Record<string, unknown> = Object.fromEntries(parsed.searchParams);
    let json = false;
    try {
      if (req.method === 'POST' && raw !== '') {
        if (contentType === '') throw new SlackError('missing_post_type');
        if (contentType.startsWith('application/x-www-form-urlencoded')) {
          Object.assign(args, Object.fromEntries(new URLSearchParams(raw)));
        } else if (contentType.startsWith('application/json')) {
          json = true;
          let body: unknown;
          try {
            body = JSON.parse(raw);
          } catch {
            throw new SlackError('invalid_json');
          }
          if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new SlackError('invalid_json');
          Object.assign(args, body);
        } else {
          throw new SlackError('invalid_post_type');
        }
      }
      log.args = { ...args, ...(typeof args.token === 'string' ? { token: '[token]' } : {}) };
      // A JSON body carries no token: it must come in the Authorization header.
      const token = bearer ?? (json ? undefined : typeof args.token === 'string' ? args.token : undefined);
      const answer = call(method, args, token, authorization);
      const caller = token ? tokens.get(token) : undefined;
      const headers: Record<string, string> = {};
      if (caller) headers['x-oauth-scopes'] = caller.scopes.join(',');
      const accepted = NEEDED[method]?.[0];
      if (accepted) headers['x-accepted-oauth-scopes'] = accepted.join(',');
      send(200, answer, headers);
    } catch (err) {
      if (err instanceof RateLimited) {
        return send(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(err.retryAfter) });
      }
      if (!(err instanceof SlackError)) throw err;
      send(200, { ok: false, error: err.error, ...err.extra });
    }
  }

  const fake: FakeSlack = {
    url,
    apiUrl: `${url}/api/`,
    authorizeUrl: `${url}/oauth/v2/authorize`,
    clientId,
    clientSecret,
    redirectUris,
    team,
    appId,
    botUserId,
    botId,
    channels,
    messages,
    requests,
    consent: 'grant',
    issueBotToken(scopes = ['chat:write', 'channels:read']) {
      return issue('bot', scopes, botUserId).access.token;
    },
    addChannel,
    rateLimit(method, { times = 1, retryAfter = 1 } = {}) {
      forced.set(method, { times, retryAfter });
    },
    expireTokens() {
      const past = Date.now() - 1;
      for (const token of tokens.values())
        if (token.expiresAt !== null) token.expiresAt = Math.min(token.expiresAt, past);
    },
    revokeToken(token) {
      const found = tokens.get(token);
      if (!found) throw new Error('no such token');
      found.revoked = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}
