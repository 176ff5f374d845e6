import { z } from 'zod';
import type { LedgerEntry } from '../../../db/tables/accounts.ts';
import { formatDollars } from '../../billing/money.ts';
import { listLedger } from '../../billing/wallet.ts';
import { isBigintText, param, parseParams } from '../../shared/params.ts';
import { defineEndpoint } from '../define.ts';
import { ledgerResponse } from '../schemas.ts';

export const ledgerParams = z
  .object({
    limit: param.num(1, 100).describe('Entries per page, at most 100; default 50.'),
    after: z
      .string()
      .regex(/^\d{1,19}$/, { message: 'must be a next_after value', abort: true })
      .refine(isBigintText, 'must be a next_after value')
      .optional()
      .describe('The next_after of the previous page.'),
  })
  .strict();

/** One ledger entry as REST and MCP answer it: decimal-dollar strings, snake_case like the wallet. */
const entryView = (e: LedgerEntry) => ({
  id: String(e.id),
  kind: e.kind,
  amount_dollars: formatDollars(e.planMicros + e.purchasedMicros),
  plan_dollars: formatDollars(e.planMicros),
  purchased_credits_dollars: formatDollars(e.purchasedMicros),
  run_id: e.runId,
  note: e.note,
  created_at: e.createdAt.toISOString(),
});

export const ledger = defineEndpoint({
  name: 'listLedger',
  permission: 'billing',
  title: 'Wallet ledger',
  tag: 'Account',
  description:
    'Every money movement of the account, newest first: purchases and plan grants, and for each run its hold (at ' +
    'start), then its release and its charge (at its end), each with the run id. The entries sum to the balances.',
  rest: { path: '/api/v1/wallet/ledger', methods: ['get'], ok: 'One page of entries.' },
  request: ledgerParams,
  response: ledgerResponse,
  errors: { 400: ['validation_failed'] },
  handler: ({ core, principal }, query: unknown) => {
    const { limit = 50, after } = parseParams(ledgerParams, query ?? {});
    return listLedger(core.db, principal.accountId, {
      first: limit,
      ...(after === undefined ? {} : { after: BigInt(after) }),
    });
  },
  respond: ({ entries, hasNextPage }) => {
    const last = entries.at(-1);
    return { entries: entries.map(entryView), next_after: hasNextPage && last ? String(last.id) : null };
  },
});
