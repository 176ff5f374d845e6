import { and, eq, isNull, lt, or, gt, sql } from 'drizzle-orm';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Executor } from '../../../db/client.ts';
import { oauthArtifactTable, oauthGrantTable } from '../../../db/tables/oauth.ts';
import { hashToken } from '../tokens.ts';

/**
 * oidc-provider's storage in Postgres (its adapter interface: upsert, find, findByUid, consume,
 * destroy, revokeByGrantId), one instance a model (`AccessToken`, `Client`, `Grant`, …), every model
 * in one table. Rows are keyed by the SHA-256 of the artifact's id: an opaque access or refresh token
 * and an authorization code are their own ids, so the table holds none of them usable. Expired rows
 * are left to `find` to ignore and cleared a day after they expire, when an authorization starts.
 */
export class PostgresAdapter implements Adapter {
  constructor(
    private readonly db: Executor,
    private readonly model: string,
  ) {}

  private row(id: string) {
    return and(eq(oauthArtifactTable.model, this.model), eq(oauthArtifactTable.idHash, hashToken(id)));
  }

  private live() {
    return or(isNull(oauthArtifactTable.expiresAt), gt(oauthArtifactTable.expiresAt, sql`now()`));
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    // A grant is its own grant: revoking by grant id takes the grant's row with its tokens.
    const grantId = this.model === 'Grant' ? id : (payload.grantId ?? null);
    const uid = typeof payload.uid === 'string' ? payload.uid : null;
    const expiresAt = expiresIn ? sql`now() + make_interval(secs => ${expiresIn})` : null;
    // The payload names the artifact's own id (`jti`): the token itself, for an opaque one. Kept out,
    // and given back by `find`, which is asked with it.
    const { jti: _id, ...stored } = payload;
    const values = { payload: stored as Record<string, unknown>, grantId, uid, expiresAt };
    if (this.model === 'Interaction') await this.prune();
    await this.db
      .insert(oauthArtifactTable)
      .values({ model: this.model, idHash: hashToken(id), ...values })
      .onConflictDoUpdate({ target: [oauthArtifactTable.model, oauthArtifactTable.idHash], set: values });
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const [found] = await this.db
      .select({ payload: oauthArtifactTable.payload, consumedAt: oauthArtifactTable.consumedAt })
      .from(oauthArtifactTable)
      .where(and(this.row(id), this.live()));
    return found && { ...this.answer(found), ...(this.model === 'Client' ? {} : { jti: id }) };
  }

  /** A session or interaction by its uid: without its id, which only its cookie holds. */
  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const [found] = await this.db
      .select({ payload: oauthArtifactTable.payload, consumedAt: oauthArtifactTable.consumedAt })
      .from(oauthArtifactTable)
      .where(and(eq(oauthArtifactTable.model, this.model), eq(oauthArtifactTable.uid, uid), this.live()));
    return found && this.answer(found);
  }

  /** No device flow here: no user codes. */
  async findByUserCode(): Promise<undefined> {
    return undefined;
  }

  async consume(id: string): Promise<void> {
    await this.db.update(oauthArtifactTable).set({ consumedAt: sql`now()` }).where(this.row(id));
  }

  async destroy(id: string): Promise<void> {
    await this.db.delete(oauthArtifactTable).where(this.row(id));
    // The provider ends a grant when its client revokes its refresh token or replays a used one: the
    // connection shows as revoked in the console.
    if (this.model === 'Grant')
      await this.db
        .update(oauthGrantTable)
        .set({ revokedAt: sql`now()` })
        .where(and(eq(oauthGrantTable.id, id), isNull(oauthGrantTable.revokedAt)));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.db
      .delete(oauthArtifactTable)
      .where(and(eq(oauthArtifactTable.model, this.model), eq(oauthArtifactTable.grantId, grantId)));
  }

  private answer(found: { payload: Record<string, unknown>; consumedAt: Date | null }): AdapterPayload {
    return { ...found.payload, ...(found.consumedAt ? { consumed: true } : {}) } as AdapterPayload;
  }

  /** Clears what expired more than a day ago (a used refresh token is kept until it expires: a replay revokes). */
  private async prune(): Promise<void> {
    await this.db.delete(oauthArtifactTable).where(lt(oauthArtifactTable.expiresAt, sql`now() - interval '1 day'`));
  }
}

/** Deletes every artifact of a grant (its codes, tokens and the grant itself): none of them works from now on. */
export async function deleteGrantArtifacts(db: Executor, grantId: string): Promise<void> {
  await db.delete(oauthArtifactTable).where(eq(oauthArtifactTable.grantId, grantId));
}
