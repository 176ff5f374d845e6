import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../../db/client.ts';
import { accountTable } from '../../../db/tables/accounts.ts';
import { membershipTable } from '../../../db/tables/identity.ts';
import { oauthArtifactTable, oauthGrantTable } from '../../../db/tables/oauth.ts';
import { isToolset } from '../../tools/toolsets.ts';
import type { Principal } from '../principal.ts';

/** What an OAuth access token may look like: oidc-provider's opaque tokens are 43 base64url characters. */
export const ACCESS_TOKEN_PATTERN = /^[A-Za-z0-9_-]{32,128}$/;

/**
 * The caller of an OAuth access token (stored by its SHA-256, `tokenHash`), or undefined for none that
 * works here: unknown, expired, issued for another resource than `resource` (its audience), its grant
 * revoked, or its consenting user no longer a member of the grant's account. The grant acts as a
 * console key of that user would: with their current role (`keyRole`), on the grant's account, its id
 * as the key's (the per-minute budget is the grant's); `oauth` carries what the user chose at consent.
 */
export async function oauthPrincipal(
  db: Executor,
  tokenHash: string,
  resource: string,
  now: Date,
): Promise<{ principal: Principal; expiresAt: Date } | undefined> {
  const [row] = await db
    .select({
      grantId: oauthGrantTable.id,
      clientId: oauthGrantTable.clientId,
      toolsets: oauthGrantTable.toolsets,
      readOnly: oauthGrantTable.readOnly,
      accountId: accountTable.id,
      plan: accountTable.plan,
      subscriptionStatus: accountTable.subscriptionStatus,
      role: membershipTable.role,
      expiresAt: oauthArtifactTable.expiresAt,
    })
    .from(oauthArtifactTable)
    .innerJoin(oauthGrantTable, eq(oauthGrantTable.id, oauthArtifactTable.grantId))
    .innerJoin(accountTable, eq(accountTable.id, oauthGrantTable.accountId))
    .innerJoin(
      membershipTable,
      and(eq(membershipTable.accountId, oauthGrantTable.accountId), eq(membershipTable.userId, oauthGrantTable.userId)),
    )
    .where(
      and(
        eq(oauthArtifactTable.model, 'AccessToken'),
        eq(oauthArtifactTable.idHash, tokenHash),
        gt(oauthArtifactTable.expiresAt, now),
        isNull(oauthGrantTable.revokedAt),
        sql`${oauthArtifactTable.payload}->>'aud' = ${resource}`,
        sql`${oauthArtifactTable.payload}->>'clientId' = ${oauthGrantTable.clientId}`,
      ),
    );
  if (!row?.expiresAt) return undefined;
  return {
    expiresAt: row.expiresAt,
    principal: {
      accountId: row.accountId,
      keyId: row.grantId,
      keyPrefix: '',
      plan: row.plan,
      subscriptionStatus: row.subscriptionStatus,
      keyRole: row.role,
      oauth: {
        grantId: row.grantId,
        clientId: row.clientId,
        toolsets: row.toolsets.filter(isToolset),
        readOnly: row.readOnly,
      },
    },
  };
}

/** Records that a grant's token was used now, unless it was within the last minute. */
export async function touchGrant(db: Executor, grantId: string): Promise<void> {
  await db
    .update(oauthGrantTable)
    .set({ lastUsedAt: sql`now()` })
    .where(
      and(
        eq(oauthGrantTable.id, grantId),
        sql`(${oauthGrantTable.lastUsedAt} is null or ${oauthGrantTable.lastUsedAt} < now() - interval '1 minute')`,
      ),
    );
}
