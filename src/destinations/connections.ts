/**
 * An account's connections to providers: made by the provider's OAuth authorization-code flow (the
 * console sends the user to the provider and gets a code back at /connections/callback) or with a
 * token the provider issues (a HubSpot private-app token, a Slack bot token). Owners and admins
 * connect and disconnect; members use connections. Tokens are sealed (secrets.ts), never logged or
 * returned; an access token about to expire is refreshed with the refresh token, once however many
 * deliveries ask at the same moment (the row is locked). A grant the provider refuses marks the
 * connection broken with the reason, pauses its destinations and tells the account's webhooks.
 * Disconnecting revokes the grant at the provider where it has a revoke endpoint. Connecting,
 * disconnecting and a connection breaking are audited.
 */
import { createHash, randomBytes } from 'node:crypto';
import { and, desc, eq, lt } from 'drizzle-orm';
import { z } from 'zod';
import type { Database, Executor, Transaction } from '../../db/client.ts';
import {
  type Connection,
  connectAttemptTable,
  connectionTable,
  destinationTable,
  PROVIDERS,
  type Provider,
} from '../../db/tables/destinations.ts';
import type { Principal } from '../accounts/principal.ts';
import { requireRole } from '../accounts/roles.ts';
import { type AuditActor, type AuditClient, byCaller, recordAudit, SYSTEM } from '../audit/audit.ts';
import { getInstallationSecret } from '../accounts/installation.ts';
import type { Core } from '../core.ts';
import { AppError, fromZodError } from '../shared/errors.ts';
import { randomBase62 } from '../shared/ids.ts';
import { assertStorable, unstorable } from '../shared/params.ts';
import { queueAccountEvent } from '../webhooks/deliveries.ts';
import {
  BY_TOKEN,
  type CheckedToken,
  CONNECTABLE,
  type Connectable,
  type Granted,
  PROVIDER_AUTH,
} from './provider-auth.ts';
import { parseServiceAccountKey, type SheetsCredential } from './providers/google.ts';
import type { SalesforceSession } from './providers/salesforce.ts';
import { GrantRefused } from './providers/types.ts';
import { installationKey, SecretBox } from './secrets.ts';

export type ConnectionDeps = Pick<Core, 'db' | 'config' | 'clock'>;

export const newConnectionId = () => `con_${randomBase62(16)}`;

export { CONNECTABLE };

const PROVIDER_NAMES: Record<Provider, string> = {
  hubspot: 'HubSpot',
  salesforce: 'Salesforce',
  google: 'Google',
  slack: 'Slack',
};
export const providerName = (provider: Provider) => PROVIDER_NAMES[provider];

/** The sealing key: SECRETS_KEYS, or (the embedded database only) one derived from the installation's secret. */
export async function secretBox(core: Pick<Core, 'db' | 'config'>): Promise<SecretBox> {
  const { secretKeys } = core.config.destinations;
  if (secretKeys.length > 0) return new SecretBox(secretKeys);
  if (core.config.databaseUrl)
    throw new AppError(
      503,
      'secrets_not_configured',
      'This server keeps no provider tokens yet: its operator sets SECRETS_KEYS to connect providers.',
    );
  return new SecretBox([installationKey(await getInstallationSecret(core.db))]);
}

const connectionNotFound = () => new AppError(404, 'connection_not_found', 'The account has no such connection.');

const name = z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters');
const provider = z.enum(CONNECTABLE, { message: `must be one of ${CONNECTABLE.join(', ')}` });
const byToken = BY_TOKEN.map((p) => `${p} (${PROVIDER_AUTH[p].token})`).join(', ');

export const tokenConnectionInput = z
  .object({
    provider: z
      .enum(BY_TOKEN as [Connectable, ...Connectable[]], { message: `must be one of ${BY_TOKEN.join(', ')}` })
      .describe(`The provider: ${byToken}.`),
    name: name.describe('What the account calls it.'),
    token: z.string().trim().min(1, 'must not be empty').max(8_000).describe('The token the provider issued.'),
  })
  .strict();

export const oauthConnectionInput = z
  .object({
    provider: provider.describe(`The provider: ${CONNECTABLE.join(', ')}.`),
    name: name.describe('What the account calls it.'),
  })
  .strict();

function parse<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  assertStorable(raw);
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) throw fromZodError(parsed.error);
  return parsed.data;
}

/** The audit log's event of a connection made, in the transaction that keeps it. */
async function connected(tx: Transaction, c: Connection, actor: AuditActor, client: AuditClient | null) {
  const target = { type: 'connection' as const, id: c.id, label: c.name };
  const details = { provider: c.provider, method: c.method };
  await recordAudit(tx, { accountId: c.accountId, actor, client, action: 'connection.created', target, details });
  return c;
}

/** Seals a connection's tokens, bound to its id and field. */
const sealTokens = (box: SecretBox, id: string, tokens: { accessToken: string; refreshToken: string | null }) => ({
  accessToken: box.seal(tokens.accessToken, `${id}:access`),
  refreshToken: tokens.refreshToken ? box.seal(tokens.refreshToken, `${id}:refresh`) : null,
});

/** Connects with a token the provider issued: checked at the provider first, then sealed and kept. */
export async function connectWithToken(core: ConnectionDeps, principal: Principal, raw: unknown): Promise<Connection> {
  requireRole(principal, 'connections');
  const input = parse(tokenConnectionInput, raw);
  const box = await secretBox(core);
  let who: CheckedToken;
  const refused = (why: string) =>
    new AppError(400, 'validation_failed', `${providerName(input.provider)} refused the token.`, [
      { path: 'token', message: why },
    ]);
  try {
    who = await PROVIDER_AUTH[input.provider].checkToken(core.config.destinations, input.token);
  } catch (err) {
    if (err instanceof GrantRefused) throw refused(`${providerName(input.provider)} does not take this token`);
    throw providerDown(input.provider, err);
  }
  if ('refused' in who) throw refused(who.refused ?? 'not a token this provider issued');
  const id = newConnectionId();
  return core.db.transaction(async (tx) => {
    const [created] = await tx
      .insert(connectionTable)
      .values({
        id,
        accountId: principal.accountId,
        provider: input.provider,
        method: 'token',
        name: input.name,
        externalId: who.externalId,
        externalName: who.externalName,
        scopes: ('scopes' in who ? who.scopes : null) ?? null,
        ...sealTokens(box, id, { accessToken: input.token, refreshToken: null }),
        createdBy: principal.userId ?? null,
      })
      .returning();
    if (!created) throw new Error('the connection was not created');
    const { actor, client } = byCaller(principal);
    return connected(tx, created, actor, client);
  });
}

export const providerDown = (p: Provider, err: unknown) =>
  new AppError(503, 'provider_unavailable', `${providerName(p)} could not be reached; try again in a moment.`, [
    { path: '', message: (err as Error).message },
  ]);

/** Where a provider sends the user back with the code. */
export const callbackUrl = (publicUrl: string) => `${publicUrl}/connections/callback`;

const ATTEMPT_MINUTES = 10;
const hashOf = (state: string) => createHash('sha256').update(state).digest('base64url');

/** The operator's app at the provider, or a refusal saying none is configured. */
function appOf(core: ConnectionDeps, p: Connectable) {
  const app = core.config.destinations[p].app;
  if (!app)
    throw new AppError(
      503,
      'provider_not_configured',
      `Connecting ${providerName(p)} by signing in needs the operator's app (${p.toUpperCase()}_CLIENT_ID and ` +
        `_CLIENT_SECRET); connect with a token instead.`,
    );
  return app;
}

/**
 * Starts the authorization-code flow: answers the provider's authorization URL, with a `state` kept
 * (hashed) for 10 minutes and used once.
 */
export async function beginConnect(
  core: ConnectionDeps,
  principal: Principal,
  raw: unknown,
): Promise<{ authorizeUrl: string }> {
  requireRole(principal, 'connections');
  const input = parse(oauthConnectionInput, raw);
  const app = appOf(core, input.provider);
  await secretBox(core);
  const state = randomBytes(24).toString('base64url');
  await core.db.insert(connectAttemptTable).values({
    stateHash: hashOf(state),
    accountId: principal.accountId,
    provider: input.provider,
    name: input.name,
    userId: principal.userId ?? null,
    expiresAt: new Date(core.clock().getTime() + ATTEMPT_MINUTES * 60_000),
  });
  const { url: base, params } = PROVIDER_AUTH[input.provider].authorizeParams(core.config.destinations);
  const url = new URL(base);
  url.searchParams.set('client_id', app.clientId);
  url.searchParams.set('redirect_uri', callbackUrl(core.config.publicUrl));
  for (const [param, value] of Object.entries(params)) url.searchParams.set(param, value);
  url.searchParams.set('state', state);
  return { authorizeUrl: url.toString() };
}

/**
 * Ends the flow at the callback: the state found (once, not expired), the code exchanged, the tokens
 * sealed and the connection kept. Answers the connection, or why it was not made, in words for the
 * console to show.
 */
export async function finishConnect(
  core: ConnectionDeps,
  query: { state?: string; code?: string; error?: string },
): Promise<{ connection?: Connection; refused?: string }> {
  if (!query.state || unstorable(query.state)) return { refused: 'The provider sent back no sign-in to finish.' };
  const [attempt] = await core.db
    .delete(connectAttemptTable)
    .where(eq(connectAttemptTable.stateHash, hashOf(query.state)))
    .returning();
  if (!attempt || attempt.expiresAt < core.clock())
    return { refused: 'This sign-in has expired or was used already; connect again.' };
  const p = attempt.provider as Connectable;
  if (query.error || !query.code || unstorable(query.code))
    return { refused: `${providerName(p)} did not grant access${query.error ? ` (${query.error})` : ''}.` };
  const app = appOf(core, p);
  const box = await secretBox(core);
  const grant = { code: query.code, redirectUri: callbackUrl(core.config.publicUrl) };
  let tokens: Granted;
  try {
    tokens = await PROVIDER_AUTH[p].exchange(core.config.destinations, app, grant);
  } catch (err) {
    if (err instanceof GrantRefused) return { refused: `${providerName(p)} refused the sign-in: ${err.message}` };
    return { refused: `${providerName(p)} could not be reached; connect again in a moment.` };
  }
  const id = newConnectionId();
  const connection = await core.db.transaction(async (tx) => {
    const [created] = await tx
      .insert(connectionTable)
      .values({
        id,
        accountId: attempt.accountId,
        provider: p,
        method: 'oauth',
        name: attempt.name,
        externalId: tokens.externalId,
        externalName: tokens.externalName,
        scopes: tokens.scopes,
        instanceUrl: tokens.instanceUrl ?? null,
        ...sealTokens(box, id, tokens),
        accessExpiresAt: tokens.expiresAt,
        createdBy: attempt.userId,
      })
      .returning();
    if (!created) throw new Error('the connection was not created');
    // Who began the flow finishes it at the provider's callback; the attempt keeps no key to name.
    const actor: AuditActor = attempt.userId
      ? { type: 'user', id: attempt.userId }
      : { type: 'api_key', id: null, label: 'An API key' };
    return connected(tx, created, actor, null);
  });
  return { connection };
}

/** Forgets flows not finished in time. */
export async function purgeConnectAttempts(db: Database, now: Date) {
  await db.delete(connectAttemptTable).where(lt(connectAttemptTable.expiresAt, now));
}

/** A connection's access token, refreshed first when it expires within a minute. */
export async function accessTokenOf(
  core: ConnectionDeps & Pick<Core, 'events'>,
  connectionId: string,
): Promise<string> {
  const box = await secretBox(core);
  return core.db.transaction(async (tx) => {
    const [connection] = await tx
      .select()
      .from(connectionTable)
      .where(eq(connectionTable.id, connectionId))
      .for('update');
    if (!connection) throw connectionNotFound();
    if (connection.status === 'broken') throw new GrantRefused(connection.brokenReason ?? 'the connection is broken');
    const expiring =
      connection.accessExpiresAt && connection.accessExpiresAt.getTime() - core.clock().getTime() < 60_000;
    const { refresh } = PROVIDER_AUTH[connection.provider];
    if (!expiring || !connection.refreshToken || !refresh)
      return box.open(connection.accessToken, `${connection.id}:access`);
    const refreshToken = box.open(connection.refreshToken, `${connection.id}:refresh`);
    const app = appOf(core, connection.provider);
    const tokens = await refresh(core.config.destinations, app, refreshToken);
    const sealed = sealTokens(box, connection.id, {
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken ?? refreshToken,
    });
    await tx
      .update(connectionTable)
      .set({ ...sealed, accessExpiresAt: tokens.expiresAt, refreshedAt: core.clock() })
      .where(eq(connectionTable.id, connection.id));
    return tokens.accessToken;
  });
}

/**
 * Marks a connection broken (its grant revoked or expired at the provider): its destinations pause with
 * the reason, and the account's webhooks get `connection.broken`.
 */
export async function markBroken(core: Pick<Core, 'db' | 'clock'>, connectionId: string, reason: string) {
  await core.db.transaction(async (tx) => {
    const [broken] = await tx
      .update(connectionTable)
      .set({ status: 'broken', brokenReason: reason })
      .where(and(eq(connectionTable.id, connectionId), eq(connectionTable.status, 'active')))
      .returning();
    if (!broken) return;
    const why = `Its connection ${broken.name} (${providerName(broken.provider)}) is broken: ${reason}. Connect again.`;
    await tx
      .update(destinationTable)
      .set({ pausedAt: core.clock(), pausedReason: why })
      .where(eq(destinationTable.connectionId, connectionId));
    await queueAccountEvent(tx, broken.accountId, 'connection.broken', {
      type: 'connection.broken',
      timestamp: core.clock().toISOString(),
      data: { connectionId, provider: broken.provider, reason },
    });
    await recordAudit(tx, {
      accountId: broken.accountId,
      actor: SYSTEM,
      action: 'connection.broken',
      target: { type: 'connection', id: connectionId, label: broken.name },
      details: { provider: broken.provider, reason },
    });
  });
}

/** Disconnects: the grant revoked at the provider (where it can be), the connection and its destinations deleted. */
export async function disconnect(core: ConnectionDeps, principal: Principal, id: string): Promise<void> {
  requireRole(principal, 'connections');
  const connection = await findConnection(core.db, principal.accountId, id);
  if (connection.status === 'active') {
    const box = await secretBox(core);
    try {
      await PROVIDER_AUTH[connection.provider].revoke(
        core.config.destinations,
        core.config.destinations[connection.provider].app,
        {
          accessToken: box.open(connection.accessToken, `${id}:access`),
          refreshToken: connection.refreshToken ? box.open(connection.refreshToken, `${id}:refresh`) : null,
          method: connection.method,
        },
      );
    } catch (err) {
      throw providerDown(connection.provider, err);
    }
  }
  await core.db.transaction(async (tx) => {
    await tx.delete(connectionTable).where(eq(connectionTable.id, connection.id));
    await recordAudit(tx, {
      ...byCaller(principal),
      action: 'connection.removed',
      target: { type: 'connection', id: connection.id, label: connection.name },
      details: { provider: connection.provider },
    });
  });
}

export async function findConnection(db: Executor, accountId: string, id: string): Promise<Connection> {
  if (unstorable(id)) throw connectionNotFound();
  const [connection] = await db
    .select()
    .from(connectionTable)
    .where(and(eq(connectionTable.id, id), eq(connectionTable.accountId, accountId)));
  if (!connection) throw connectionNotFound();
  return connection;
}

export async function listConnections(db: Database, accountId: string): Promise<Connection[]> {
  return db
    .select()
    .from(connectionTable)
    .where(eq(connectionTable.accountId, accountId))
    .orderBy(desc(connectionTable.createdAt), desc(connectionTable.id));
}

/** A connection as the faces show it: never a token. */
export const connectionView = (c: Connection) => ({
  id: c.id,
  provider: c.provider,
  method: c.method,
  name: c.name,
  externalId: c.externalId,
  externalName: c.externalName,
  scopes: c.scopes,
  status: c.status,
  brokenReason: c.brokenReason,
  createdAt: c.createdAt.toISOString(),
  refreshedAt: c.refreshedAt?.toISOString() ?? null,
});

export { PROVIDERS };

/**
 * A Salesforce connection's session at its org. Salesforce gives no expiry: jsforce refreshes a session
 * the org refuses, and the new access token is sealed and kept here.
 */
export async function salesforceSessionOf(core: ConnectionDeps, connectionId: string): Promise<SalesforceSession> {
  const box = await secretBox(core);
  const [connection] = await core.db.select().from(connectionTable).where(eq(connectionTable.id, connectionId));
  if (!connection) throw connectionNotFound();
  if (connection.status === 'broken') throw new GrantRefused(connection.brokenReason ?? 'the connection is broken');
  return {
    instanceUrl: connection.instanceUrl ?? '',
    accessToken: box.open(connection.accessToken, `${connection.id}:access`),
    refreshToken: connection.refreshToken ? box.open(connection.refreshToken, `${connection.id}:refresh`) : null,
    async onRefresh(accessToken) {
      await core.db
        .update(connectionTable)
        .set({ accessToken: box.seal(accessToken, `${connection.id}:access`), refreshedAt: core.clock() })
        .where(eq(connectionTable.id, connection.id));
    },
  };
}

/** What writes to Google Sheets for a connection: its access token (refreshed), or its service account's key. */
export async function sheetsCredentialOf(
  core: ConnectionDeps & Pick<Core, 'events'>,
  connectionId: string,
): Promise<SheetsCredential> {
  const [connection] = await core.db.select().from(connectionTable).where(eq(connectionTable.id, connectionId));
  if (!connection) throw connectionNotFound();
  if (connection.method === 'oauth') return { accessToken: await accessTokenOf(core, connectionId) };
  const key = parseServiceAccountKey(await accessTokenOf(core, connectionId));
  if (typeof key === 'string') throw new GrantRefused(key);
  return { serviceAccount: key };
}
