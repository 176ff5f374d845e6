/**
 * The `tools` suite on its own, with options (see bench/lib/tools.ts). Prints the table and stores
 * the figures under `tools` in bench/results/latest.json, as `npm run bench -- --only tools` does,
 * unless --no-save.
 *
 *   node --import tsx bench/tools.ts [--scale small|medium|large] [--repetitions N] [--only tool1,tool2] [--reuse] [--data-dir DIR]
 *                                    [--shared-buffers SIZE|default] [--json FILE] [--no-save]
 *
 * --reuse keeps the seeded database for the next run (the one bench/database.ts keeps). --only takes
 * tool names or case keys (maps, local-reviews, property-lookup, …).
 */
import { CATALOG_FLAGS, readFlags, runStandalone } from './lib/harness.ts';
import { benchTools, tools } from './lib/tools.ts';

const flags = readFlags(
  'usage: node --import tsx bench/tools.ts [--scale small|medium|large] [--repetitions N] [--only tool1,tool2] [--reuse] [--data-dir DIR] [--shared-buffers SIZE|default] [--json FILE] [--no-save]',
  {
    ...CATALOG_FLAGS,
    repetitions: { type: 'string' },
    only: { type: 'string', multiple: true },
    'no-save': { type: 'boolean' },
  },
);

await runStandalone(
  tools,
  () => benchTools({ ...flags.catalog(), repetitions: flags.count('repetitions'), only: flags.list('only') }),
  {
    json: flags.json,
    save: !flags.flag('no-save'),
  },
);
