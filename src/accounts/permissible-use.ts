/**
 * Permissible use: the tools about individuals (criminal records, the people finder: `permissibleUse` in
 * their declarations) are not for employment or tenant screening or any other regulated purpose (the
 * FCRA's). Someone in the account acknowledges that once, recorded with who and when and in the audit
 * log; until then a start of those tools is refused on every face, naming how to acknowledge.
 */
import { and, eq, isNull } from 'drizzle-orm';
import { type Executor, runInTransaction } from '../../db/client.ts';
import { accountTable } from '../../db/tables/accounts.ts';
import { actorOf, byCaller, recordAudit } from '../audit/audit.ts';
import { AppError } from '../shared/errors.ts';
import type { ToolDefinition } from '../tools/types.ts';
import type { Principal } from './principal.ts';

/** The notice, as every face shows it and the audit log keeps it. */
export const PERMISSIBLE_USE_NOTICE =
  'Criminal records and people-finder results are not consumer reports: they must not be used for ' +
  'employment, tenant screening, credit, insurance or any other purpose regulated by the Fair Credit ' +
  'Reporting Act (FCRA) or similar laws.';

/** The REST route that acknowledges; the faces name their own way to it (their message translators). */
export const PERMISSIBLE_USE_PATH = '/api/v1/permissible-use';

export interface PermissibleUse {
  notice: string;
  acknowledgedAt: Date | null;
  acknowledgedBy: string | null;
}

export async function permissibleUseOf(db: Executor, accountId: string): Promise<PermissibleUse> {
  const [row] = await db
    .select({ at: accountTable.permissibleUseAcknowledgedAt, by: accountTable.permissibleUseAcknowledgedBy })
    .from(accountTable)
    .where(eq(accountTable.id, accountId));
  return { notice: PERMISSIBLE_USE_NOTICE, acknowledgedAt: row?.at ?? null, acknowledgedBy: row?.by ?? null };
}

/** Records the acknowledgement once, with an audit event (a second one changes nothing); answers the state. */
export function acknowledgePermissibleUse(db: Executor, principal: Principal): Promise<PermissibleUse> {
  return runInTransaction(db, async (tx) => {
    const [first] = await tx
      .update(accountTable)
      .set({ permissibleUseAcknowledgedAt: new Date(), permissibleUseAcknowledgedBy: actorOf(principal).id })
      .where(and(eq(accountTable.id, principal.accountId), isNull(accountTable.permissibleUseAcknowledgedAt)))
      .returning({ id: accountTable.id });
    if (first)
      await recordAudit(tx, {
        ...byCaller(principal),
        action: 'account.permissible_use_acknowledged',
        details: { notice: PERMISSIBLE_USE_NOTICE },
      });
    return permissibleUseOf(tx, principal.accountId);
  });
}

/** Refuses a start of a tool about individuals until the account has acknowledged the notice. */
export async function assertPermissibleUse(db: Executor, accountId: string, tool: ToolDefinition): Promise<void> {
  if (!tool.permissibleUse) return;
  const { acknowledgedAt } = await permissibleUseOf(db, accountId);
  if (acknowledgedAt) return;
  throw new AppError(
    403,
    'permissible_use_required',
    `${PERMISSIBLE_USE_NOTICE} Acknowledge this once for the account with POST ${PERMISSIBLE_USE_PATH}, ` +
      `then start ${tool.title} again.`,
  );
}
