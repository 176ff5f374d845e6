import { creditPurchase, purchaseOf } from '../wallet.ts';
import type { Payments } from './port.ts';

/**
 * PAYMENTS=demo: a purchase is credited without any payment, and says so in its ledger note, its
 * answer's `payment.mode` and its message. The default only with the embedded database.
 */
export const demoPayments: Extract<Payments, { mode: 'demo' }> = {
  mode: 'demo',
  async buyCredits(tx, { terms }) {
    const payment = { mode: 'demo', reference: null } as const;
    await creditPurchase(tx, terms, payment);
    return purchaseOf(tx, terms, payment);
  },
};
