import type { IncomingMessage, ServerResponse } from 'node:http';
import { asc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { accountTable } from '../../../db/tables/accounts.ts';
import { membershipTable, type Role } from '../../../db/tables/identity.ts';
import { oauthGrantTable } from '../../../db/tables/oauth.ts';
import type { Core } from '../../core.ts';
import { AppError, ValidationError } from '../../shared/errors.ts';
import { randomBase62 } from '../../shared/ids.ts';
import { parseParams } from '../../shared/params.ts';
import { TOOLSET_NAMES, TOOLSETS, type Toolset } from '../../tools/toolsets.ts';
import type { Principal } from '../principal.ts';
import { may, requireUser, roleRequired } from '../roles.ts';
import { oauthProvider, type Provider } from './provider.ts';
import { isLoopbackHost, mcpResource, OAUTH_SCOPE } from './resource.ts';

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
 */

type ConsentDeps = Pick<Core, 'db' | 'config' | 'network'>;
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
  /** The signed-in user's accounts (absent when no one is signed in). */
  accounts?: ConsentAccount[];
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

/** The authorization waiting at `uid`, for the consent page; with the accounts of `caller` when signed in. */
export async function pendingAuthorization(
  core: ConsentDeps,
  raw: Raw,
  uid: string,
  caller: Principal | undefined,
): Promise<PendingAuthorization> {
  const provider = await oauthProvider(core);
  const interaction = await interactionOf(provider, raw, uid);
  return {
    uid,
    client: await clientOf(provider, interaction),
    toolsets: TOOLSET_NAMES.map((name) => ({ name, description: TOOLSETS[name] })),
    ...(caller ? { accounts: await accountsOf(core, caller) } : {}),
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
 * no toolset; 403 `role_required` when their role there may not create API keys. Answers where the
 * browser goes next (the authorization server, which redirects to the app with a code).
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
  const grantId = newGrantId();
  await core.db.insert(oauthGrantTable).values({
    id: grantId,
    accountId: account.id,
    userId,
    clientId: client.id,
    clientName: client.name,
    redirectHost: client.redirectHost,
    toolsets: TOOLSET_NAMES.filter((name) => input.toolsets.includes(name)),
    readOnly: input.readOnly,
  });
  // oidc-provider's grant, of the same id: the scopes asked for (of those it knows) on the MCP server.
  const asked = String(interaction.params.scope ?? '').split(' ');
  // oidc-provider takes a grant's id from `jti` (its payload's name for it), which its types leave out.
  const grant = new provider.Grant({ accountId: userId, clientId: client.id, jti: grantId } as { clientId: string });
  const known = asked.filter((scope) => ['openid', 'offline_access', OAUTH_SCOPE].includes(scope));
  if (known.length > 0) grant.addOIDCScope(known.join(' '));
  grant.addResourceScope(mcpResource(core.config), OAUTH_SCOPE);
  try {
    await grant.save();
  } catch (err) {
    await core.db.delete(oauthGrantTable).where(eq(oauthGrantTable.id, grantId));
    throw err;
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
