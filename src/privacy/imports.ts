/**
 * The suppression rule as a catalog import calls it (db/import: `ImportOptions.suppressed`): a row about a
 * person on the deployment's list is left out of the import and counted, so an opted-out or erased
 * person never comes back with the next file. Accounts' own lists do not touch the shared catalog.
 */
import type { SuppressedRows } from '../../db/import/index.ts';
import { suppressionCheck } from './suppression.ts';

export const importSuppression: SuppressedRows = {
  async any(tx) {
    const [row] = await tx<
      { any: boolean }[]
    >`select exists (select 1 from suppression where account_id is null) as any`;
    return row?.any ?? false;
  },
  check: (tx, rows) => suppressionCheck((text, params) => tx.unsafe(text, params as never[]) as never, null)(rows),
};
