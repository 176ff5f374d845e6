import type { IncomingMessage, ServerResponse } from 'node:http';
import { and, asc, desc, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { accountTable } from '../../../db/tables/accounts.ts';
import { membershipTable, type Role } from '../../../db/tables/identity.ts';
import type { Executor } from '../../../db/client.ts';
import { oauthGrantTable } from '../../../db/tables/oauth.ts';
import { recordAudit } from '../../audit/audit.ts';
import type { Core } from '../../core.ts';
import { AppError, ValidationError } from '../../shared/errors.ts';
import { randomBase62 } from '../../shared/ids.ts';
import { parseParams } from '../../shared/params.ts';
import { isToolset, TOOLSET_NAMES, TOOLSETS, type Toolset } from '../../tools/toolsets.ts';
import type { Principal } from '../principal.ts';
import { may, requireUser, roleRequired } from '../roles.ts';
import { deleteGrantArtifacts } from './adapter.ts';
import { oauthProvider, type Provider } from './provider.ts';
import { type Access, accessAskedFor, isLoopbackHost, mcpResource, OAUTH_SCOPES, scopesOf } from './resource.ts';

/**
 * The user's side of an authorization: the console's consent page shows what a client asks for
 * (`pendingAuthorization`), and the user allows it, choosing the account and the toolsets (`allow`),
 * or denies it (`deny`). The pending authorization is oidc-provider's interaction, found by its
 * cookie (path-scoped to `/oauth/interaction/:uid`); allowing it makes a grant (`oauth_grant`, and
 * oidc-provider's own grant of the same id) and hands the user back to the authorization server,
 * which redirects to the client with a code.
 *
 * Who may connect an app: whoever may create an API key in the account (roles.ts, `keys`): owners
 * and admins. The grant then acts as a console key of theirs would.
 *
 * One connection per app, user and account (as an OAuth app's authorization is one on GitHub): the
 * user connecting an app to an account it is connected to already changes that connection, whose
 * tokens keep working with what the user chose now. The page offers checked what the app asks for
 * (its `leads:<toolset>` and `leads:write` scopes, resource.ts) and what the connection holds, so an
 * app asking for more after a step-up widens it with one click.
 */

type ConsentDeps = Pick<Core, 'db' | 'config' | 'network' | 'auth'>;
type Raw = { req: IncomingMessage; res: ServerResponse };

export const newGrantId = () => `oag_${randomBase62(16)}`;

export interface ConsentAccount {
  id: string;
  name: string;
  role: Role;
  /** Whether this user may connect an app to it (roles.ts: the right to create API keys). */
  mayConnect: boolean;
}

/** What the consent page shows. */
export interface PendingAuthorization {
  uid: string;
  client: {
    id: string;
    /** What the client calls itself (it registered itself: unverified). */
    name: string;
    /** Where the authorization code goes: the host of the redirect URI. */
    redirectHost: string;
    /** Whether that host is this machine's (localhost, 127.0.0.1, [::1]): an app running where the browser is. */
    localOnly: boolean;
    /**
     * For a client named by the https URL of its metadata document: that URL's host, which publishes
     * (and so vouches for) the name; absent for a client that registered itself.
     */
    publishedBy?: string;
  };
  /** The toolsets to choose from, in order, with what each holds. */
  toolsets: { name: Toolset; description: string }[];
  /**
   * What the page offers checked: what the app asks for (every toolset, writing allowed, when it names
   * none) with what its connection holds already; the account of that connection.
   */
  suggested: Access & { accountId?: string };
  /** The signed-in user's accounts (absent when no one is signed in). */
  accounts?: ConsentAccount[];
  /** The user's connection of this app already, which allowing changes (absent when none). */
  connection?: { accountId: string; accountName: string; toolsets: Toolset[]; readOnly: boolean };
}

const expired = () =>
  new AppError(
    404,
    'not_found',
    'This authorization request has expired or was opened in another browser: ' +
      'start again from the app you are connecting.',
  );

/** The interaction of `uid`, by its cookie: 404 when it is gone, belongs to another browser or has another uid. */
async function interactionOf(provider: Provider, raw: Raw, uid: string) {
  const interaction = await provider.interactionDetails(raw.req, raw.res).catch(() => undefined);
  if (!interaction || interaction.uid !== uid) throw expired();
  return interaction;
}

async function clientOf(provider: Provider, interaction: { params: Record<string, unknown> }) {
  const clientId = String(interaction.params.client_id ?? '');
  const client = await provider.Client.find(clientId);
  if (!client) throw expired();
  const redirect = URL.parse(String(interaction.params.redirect_uri ?? client.redirectUris?.[0] ?? ''));
  return {
    id: client.clientId,
    name: client.clientName ?? client.clientId,
    redirectHost: redirect?.host ?? '',
    localOnly: redirect ? isLoopbackHost(redirect.hostname) : false,
    ...((client as { clientIdMetadataDocument?: boolean }).clientIdMetadataDocument
      ? { publishedBy: new URL(client.clientId).host }
      : {}),
  };
}

/** The user's accounts, oldest membership first, with whether they may connect an app to each. */
async function accountsOf(core: ConsentDeps, caller: Principal): Promise<ConsentAccount[]> {
  const { userId } = requireUser(caller);
  const rows = await core.db
    .select({ id: accountTable.id, name: accountTable.name, role: membershipTable.role })
    .from(membershipTable)
    .innerJoin(accountTable, eq(accountTable.id, membershipTable.accountId))
    .where(eq(membershipTable.userId, userId))
    .orderBy(asc(membershipTable.createdAt), asc(membershipTable.id));
  return rows.map((row) => ({ ...row, mayConnect: may({ ...caller, accountId: row.id, role: row.role }, 'keys') }));
}

/** The user's live connection of `clientId`, newest first; on `accountId` when given. */
async function connectionOf(core: ConsentDeps, userId: string, clientId: string, accountId?: string) {
  const [row] = await core.db
    .select()
    .from(oauthGrantTable)
    .where(
      and(
        eq(oauthGrantTable.userId, userId),
        eq(oauthGrantTable.clientId, clientId),
        accountId ? eq(oauthGrantTable.accountId, accountId) : undefined,
        isNull(oauthGrantTable.revokedAt),
      ),
    )
    .orderBy(desc(oauthGrantTable.createdAt), desc(oauthGrantTable.id))
    .limit(1);
  return row;
}

/** The authorization waiting at `uid`, for the consent page; with the accounts of `caller` when signed in. */
export async function pendingAuthorization(
  core: ConsentDeps,
  raw: Raw,
  uid: string,
  caller: Principal | undefined,
): Promise<PendingAuthorization> {
  const provider = await oauthProvider(core);
  const interaction = await interactionOf(provider, raw, uid);
  const client = await clientOf(provider, interaction);
  const asked = accessAskedFor(String(interaction.params.scope ?? '')) ?? { toolsets: TOOLSET_NAMES, readOnly: false };
  const accounts = caller ? await accountsOf(core, caller) : undefined;
  const held = caller ? await connectionOf(core, requireUser(caller).userId, client.id) : undefined;
  const heldAccount = held && accounts?.find((account) => account.id === held.accountId);
  const connection = held &&
    heldAccount && {
      accountId: held.accountId,
      accountName: heldAccount.name,
      toolsets: held.toolsets.filter(isToolset),
      readOnly: held.readOnly,
    };
  const toolsets = new Set([...asked.toolsets, ...(connection?.toolsets ?? [])]);
  return {
    uid,
    client,
    toolsets: TOOLSET_NAMES.map((name) => ({ name, description: TOOLSETS[name] })),
    suggested: {
      toolsets: TOOLSET_NAMES.filter((name) => toolsets.has(name)),
      readOnly: asked.readOnly && (connection?.readOnly ?? true),
      ...(connection ? { accountId: connection.accountId } : {}),
    },
    ...(accounts ? { accounts } : {}),
    ...(connection ? { connection } : {}),
  };
}

const allowInput = z
  .object({
    accountId: z.string().min(1, 'choose the account the app will act on').max(100),
    toolsets: z
      .array(z.enum(TOOLSET_NAMES as [Toolset, ...Toolset[]]))
      .min(1, 'choose at least one toolset: the app sees the tools of those only')
      .max(TOOLSET_NAMES.length),
    readOnly: z.boolean().default(false),
  })
  .strict();

/**
 * Allows the authorization at `uid` for the signed-in `caller`: on the account, with the toolsets and
 * the read-only mode of `body`. Refused at its field for an account the user is not a member of or
 * no toolset; 403 `role_required` when their role there may not create API keys. The user's connection
 * of this app to that account, if there is one, is changed (its id, and so its tokens, kept); otherwise
 * a connection is made. Answers where the browser goes next (the authorization server, which redirects
 * to the app with a code).
 */
export async function allow(core: ConsentDeps, raw: Raw, uid: string, caller: Principal, body: unknown) {
  const { userId } = requireUser(caller);
  const input = parseParams(allowInput, body);
  const provider = await oauthProvider(core);
  const interaction = await interactionOf(provider, raw, uid);
  const account = (await accountsOf(core, caller)).find((a) => a.id === input.accountId);
  if (!account) throw new ValidationError([{ path: 'accountId', message: 'you are not a member of this account' }]);
  if (!account.mayConnect)
    throw roleRequired(
      `Connecting an app is for the account’s owners and admins, as creating an API key is; ` +
        `your role in ${account.name} is ${account.role}.`,
    );
  const client = await clientOf(provider, interaction);
  const chosen = { toolsets: TOOLSET_NAMES.filter((name) => input.toolsets.includes(name)), readOnly: input.readOnly };
  const held = await connectionOf(core, userId, client.id, account.id);
  const grantId = held?.id ?? newGrantId();
  const saveGrant = () => {
    // oidc-provider's grant, of the same id (saving it again replaces it): the scopes asked for that the
    // user allowed (a token carries those), the others rejected (so they are not asked again at once), and
    // the MCP server's scopes of what the user chose.
    const asked = String(interaction.params.scope ?? '')
      .split(' ')
      .filter(Boolean);
    const allowed = new Set(['openid', 'offline_access', ...scopesOf(chosen).split(' ')]);
    const declined = asked.filter((scope) => !allowed.has(scope));
    // oidc-provider takes a grant's id from `jti` (its payload's name for it), which its types leave out.
    const grant = new provider.Grant({ accountId: userId, clientId: client.id, jti: grantId } as { clientId: string });
    const granted = asked.filter((scope) => allowed.has(scope));
    if (granted.length > 0) grant.addOIDCScope(granted.join(' '));
    if (declined.length > 0) grant.rejectOIDCScope(declined.join(' '));
    grant.addResourceScope(mcpResource(core.config), scopesOf(chosen));
    const declinedHere = declined.filter((scope) => OAUTH_SCOPES.includes(scope));
    if (declinedHere.length > 0) grant.rejectResourceScope(mcpResource(core.config), declinedHere.join(' '));
    return grant.save();
  };
  const fields = { clientName: client.name, redirectHost: client.redirectHost, ...chosen };
  // The connection is recorded in the audit log of the account it is for, in the transaction that writes it.
  const audited = (tx: Executor) =>
    recordAudit(tx, {
      accountId: account.id,
      actor: { type: 'user', id: userId },
      client: caller.client ?? null,
      action: 'app.authorized',
      target: { type: 'app', id: grantId, label: client.name },
      details: { client: client.name, redirectHost: client.redirectHost, ...chosen },
    });
  if (held) {
    await saveGrant();
    await core.db.transaction(async (tx) => {
      await tx.update(oauthGrantTable).set(fields).where(eq(oauthGrantTable.id, grantId));
      await audited(tx);
    });
    // Its tokens' callers are cached with what it held: forgotten, so they act with what it holds now.
    core.auth.clear();
  } else {
    // oidc-provider's grant first: until the connection's row is written, nothing acts on it.
    await saveGrant();
    try {
      await core.db.transaction(async (tx) => {
        await tx
          .insert(oauthGrantTable)
          .values({ id: grantId, accountId: account.id, userId, clientId: client.id, ...fields });
        await audited(tx);
      });
    } catch (err) {
      await deleteGrantArtifacts(core.db, grantId);
      throw err;
    }
  }
  const returnTo = await provider.interactionResult(
    raw.req,
    raw.res,
    { login: { accountId: userId, remember: false }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
  return { returnTo, grantId };
}

/** Denies the authorization at `uid`: the app is sent `access_denied`. */
export async function deny(core: ConsentDeps, raw: Raw, uid: string, caller: Principal) {
  requireUser(caller);
  const provider = await oauthProvider(core);
  await interactionOf(provider, raw, uid);
  const returnTo = await provider.interactionResult(
    raw.req,
    raw.res,
    { error: 'access_denied', error_description: 'The user did not allow the app to connect.' },
    { mergeWithLastSubmission: false },
  );
  return { returnTo };
}
