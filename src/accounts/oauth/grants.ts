import { and, desc, eq, inArray, isNull } from 'drizzle-orm';
import type { Executor } from '../../../db/client.ts';
import { oauthGrantTable, type OAuthGrant } from '../../../db/tables/oauth.ts';
import type { Core } from '../../core.ts';
import { notFound } from '../../shared/errors.ts';
import type { Principal } from '../principal.ts';
import { requireRole } from '../roles.ts';
import { byCaller, recordAudit } from '../../audit/audit.ts';
import { deleteGrantArtifacts } from './adapter.ts';

/**
 * The account's connected apps: the OAuth grants its members made at the consent page, listed and
 * revoked in the console beside the API keys, by whoever manages keys (roles.ts, `keys`). Revoking one
 * stops its tokens at once in this process (its cached callers forgotten) and in the others within the
 * key cache time; its refresh token is gone, so the app must ask the user again. Connecting and revoking
 * are recorded in the account's audit log (`app.authorized` at the consent page, `app.revoked` here).
 */

/** The account's connections, newest first; revoked ones only when asked for. */
export async function listConnections(
  db: Executor,
  principal: Principal,
  includeRevoked: boolean,
): Promise<OAuthGrant[]> {
  requireRole(principal, 'keys');
  return db
    .select()
    .from(oauthGrantTable)
    .where(
      and(
        eq(oauthGrantTable.accountId, principal.accountId),
        includeRevoked ? undefined : isNull(oauthGrantTable.revokedAt),
      ),
    )
    .orderBy(desc(oauthGrantTable.createdAt), desc(oauthGrantTable.id));
}

/** Connections of the caller's account by id, in order; null for another account's or none. */
export async function loadConnections(
  db: Executor,
  principal: Principal,
  ids: readonly string[],
): Promise<(OAuthGrant | null)[]> {
  requireRole(principal, 'keys');
  const rows = ids.length
    ? await db
        .select()
        .from(oauthGrantTable)
        .where(and(eq(oauthGrantTable.accountId, principal.accountId), inArray(oauthGrantTable.id, [...ids])))
    : [];
  return ids.map((id) => rows.find((row) => row.id === id) ?? null);
}

/**
 * Revokes a connection of the caller's account: its grant is marked revoked and its codes and tokens
 * deleted (refresh tokens included). 404 for none, or one revoked already.
 */
export async function revokeConnection(
  core: Pick<Core, 'db' | 'auth' | 'clock'>,
  principal: Principal,
  id: string,
): Promise<OAuthGrant> {
  requireRole(principal, 'keys');
  const revoked = await core.db.transaction(async (tx) => {
    const [row] = await tx
      .update(oauthGrantTable)
      .set({ revokedAt: core.clock() })
      .where(
        and(
          eq(oauthGrantTable.id, id),
          eq(oauthGrantTable.accountId, principal.accountId),
          isNull(oauthGrantTable.revokedAt),
        ),
      )
      .returning();
    if (row) {
      await deleteGrantArtifacts(tx, row.id);
      await recordAudit(tx, {
        ...byCaller(principal),
        action: 'app.revoked',
        target: { type: 'app', id: row.id, label: row.clientName },
        details: { client: row.clientName },
      });
    }
    return row;
  });
  if (!revoked) throw notFound('Connection');
  core.auth.clear();
  return revoked;
}
