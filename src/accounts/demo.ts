import { eq } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { accountTable } from '../../db/tables/accounts.ts';
import { createAccount } from './accounts.ts';
import { usdToMicros } from '../billing/money.ts';
import { addMembership } from './members.ts';
import { createPasswordReset } from './password-reset.ts';
import { createUser, findUserByEmail } from './users.ts';

export const DEMO_ACCOUNT_NAME = 'demo';
export const DEMO_OWNER_EMAIL = 'demo@leadgate.local';
/** The demo owner's password-set link lasts a week: the first start's output may be read later. */
const DEMO_LINK_MS = 7 * 24 * 3600_000;

/**
 * Creates the demo account on first start, with its owner user (`demo@leadgate.local`, no password
 * yet); its key and the owner's one-time password-set token can only be shown then. An installation
 * whose demo account predates console users gets the owner (and a token) at its next start.
 */
export async function ensureDemoAccount(
  db: Database,
): Promise<{ accountId: string; apiKey?: string; ownerEmail: string; passwordToken?: string }> {
  const [existing] = await db
    .select({ id: accountTable.id })
    .from(accountTable)
    .where(eq(accountTable.name, DEMO_ACCOUNT_NAME))
    .limit(1);
  let accountId = existing?.id;
  let apiKey: string | undefined;
  if (!accountId) {
    const created = await createAccount(db, {
      name: DEMO_ACCOUNT_NAME,
      plan: 'scale',
      subscriptionStatus: 'ACTIVE',
      creditsMicros: usdToMicros(100),
    });
    accountId = created.account.id;
    apiKey = created.apiKey;
  }
  if (await findUserByEmail(db, DEMO_OWNER_EMAIL)) return { accountId, apiKey, ownerEmail: DEMO_OWNER_EMAIL };
  const passwordToken = await db.transaction(async (tx) => {
    // The operator's own user: no mailbox to verify (demo@leadgate.local receives nothing).
    const owner = await createUser(tx, {
      email: DEMO_OWNER_EMAIL,
      name: 'Demo owner',
      passwordHash: null,
      emailVerifiedAt: new Date(),
    });
    await addMembership(tx, accountId, owner.id, 'owner');
    return (await createPasswordReset(tx, owner.id, new Date(), DEMO_LINK_MS)).token;
  });
  return { accountId, apiKey, ownerEmail: DEMO_OWNER_EMAIL, passwordToken };
}
