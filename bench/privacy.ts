/**
 * The `privacy` suite on its own, with options (see bench/lib/privacy.ts). Prints the table and stores
 * the figures under `privacy` in bench/results/latest.json, as `npm run bench -- --only privacy` does,
 * unless --no-save or --quick.
 *
 *   node --import tsx bench/privacy.ts [--scale S] [--items N] [--iterations N] [--reuse] [--data-dir DIR]
 *                                      [--shared-buffers SIZE|default] [--quick] [--json FILE] [--no-save]
 *
 * --reuse copies the kept catalog (the `database` suite's, .data/bench-database or bench_leads_<scale>)
 * to a scratch database for the run, since a cycle deletes people; --quick: the medium catalog, 50,000
 * work items, 10 calls a search variant.
 */
import { CATALOG_FLAGS, readFlags, runStandalone } from './lib/harness.ts';
import { benchPrivacy, privacy } from './lib/privacy.ts';

const flags = readFlags(
  'usage: node --import tsx bench/privacy.ts [--scale S] [--items N] [--iterations N] [--reuse] [--data-dir DIR] [--shared-buffers SIZE|default] [--quick] [--json FILE] [--no-save]',
  {
    ...CATALOG_FLAGS,
    items: { type: 'string' },
    iterations: { type: 'string' },
    quick: { type: 'boolean' },
    'no-save': { type: 'boolean' },
  },
);
const quick = flags.flag('quick');

await runStandalone(
  privacy,
  () =>
    benchPrivacy({
      ...flags.catalog(),
      quick,
      items: flags.count('items'),
      iterations: flags.count('iterations'),
    }),
  { json: flags.json, save: !flags.flag('no-save') && !quick },
);
