import { eq } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { accountTable } from '../../db/schema/accounts.ts';
import { createAccount } from './accounts.ts';
import { usdToMicros } from '../billing/money.ts';

export const DEMO_ACCOUNT_NAME = 'demo';

/** Creates the demo account on first start; its key can only be shown then. */
export async function ensureDemoAccount(db: Database): Promise<{ accountId: string; apiKey?: string }> {
  const [existing] = await db.select({ id: accountTable.id }).from(accountTable).where(eq(accountTable.name, DEMO_ACCOUNT_NAME)).limit(1);
  if (existing) return { accountId: existing.id };
  const created = await createAccount(db, {
    name: DEMO_ACCOUNT_NAME,
    plan: 'scale',
    subscriptionStatus: 'ACTIVE',
    creditsMicros: usdToMicros(100),
  });
  return { accountId: created.account.id, apiKey: created.apiKey };
}
