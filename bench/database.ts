/**
 * The `database` suite on its own, with options (see bench/lib/database.ts). Prints the table and
 * stores the figures under `databaseApis` in bench/results/latest.json, as `npm run bench -- --only
 * database` does, unless --no-save or only some --parts ran.
 *
 *   node --import tsx bench/database.ts [--scale small|medium|large|xlarge] [--iterations N] [--reuse] [--data-dir DIR]
 *                                       [--shared-buffers SIZE|default] [--parts searches,paging,enrichment,places]
 *                                       [--json FILE] [--no-save]
 *
 * --reuse keeps the seeded database for the next run (DATABASE_URL: bench_leads_<scale>; embedded: a
 * Postgres kept in --data-dir, default .data/bench-database), so only the first run seeds.
 * --shared-buffers sets the embedded server's shared_buffers (default 1GB; `default` keeps 128MB).
 */
import { CATALOG_FLAGS, readFlags, runStandalone } from './lib/harness.ts';
import { benchDatabase, database, DATABASE_PARTS, type DatabasePart } from './lib/database.ts';

const flags = readFlags(
  'usage: node --import tsx bench/database.ts [--scale small|medium|large|xlarge] [--iterations N] [--reuse] [--data-dir DIR] [--shared-buffers SIZE|default] [--parts searches,paging,enrichment,places] [--json FILE] [--no-save]',
  { ...CATALOG_FLAGS, iterations: { type: 'string' }, 'no-save': { type: 'boolean' }, parts: { type: 'string' } },
);
const parts = flags.list('parts');
const unknownPart = parts?.find((part) => !(DATABASE_PARTS as readonly string[]).includes(part));
if (unknownPart !== undefined)
  flags.fail(`--parts: unknown part "${unknownPart}"; the parts are ${DATABASE_PARTS.join(', ')}`);
// Figures of some parts only would replace all of them in latest.json.
const partial = parts !== undefined && DATABASE_PARTS.some((part) => !parts.includes(part));

await runStandalone(
  database,
  () =>
    benchDatabase({
      ...flags.catalog(),
      iterations: flags.count('iterations'),
      parts: parts as DatabasePart[] | undefined,
    }),
  {
    json: flags.json,
    save: !flags.flag('no-save') && !partial,
  },
);
