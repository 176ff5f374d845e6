/**
 * The `catalog` suite on its own, at another scale or file size (see bench/lib/catalog.ts). Prints
 * the table; leaves bench/results/latest.json alone.
 *
 *   node --import tsx bench/catalog.ts [--scale small|medium|large|xlarge] [--people N] [--people-only]
 *                                      [--reuse] [--data-dir DIR] [--shared-buffers SIZE|default] [--json FILE]
 *
 * `--people-only` seeds only companies and people and skips the comparison on criminal records.
 * At xlarge, or with --reuse, it imports N new people (default 1,000,000) into the seeded catalog
 * instead (kept with --reuse as bench/database.ts keeps it, in --data-dir), and deletes them after.
 */
import { CATALOG_FLAGS, readFlags, runStandalone } from './lib/harness.ts';
import { benchCatalog, benchCatalogImport, catalog, catalogImport } from './lib/catalog.ts';

const flags = readFlags(
  'usage: node --import tsx bench/catalog.ts [--scale small|medium|large|xlarge] [--people N] [--people-only] [--reuse] [--data-dir DIR] [--shared-buffers SIZE|default] [--json FILE]',
  { ...CATALOG_FLAGS, people: { type: 'string' }, 'people-only': { type: 'boolean' } },
);
const kept = flags.catalog();

if (kept.scale === 'xlarge' || kept.reuse) {
  await runStandalone(catalogImport, () => benchCatalogImport({ ...kept, people: flags.count('people') }), {
    json: flags.json,
    save: false,
  });
} else {
  if (kept.dataDir !== undefined || kept.sharedBuffers !== undefined)
    flags.fail('--data-dir and --shared-buffers go with --reuse (an import into the kept catalog)');
  await runStandalone(
    catalog,
    () => benchCatalog({ scale: kept.scale, people: flags.count('people'), peopleOnly: flags.flag('people-only') }),
    { json: flags.json, save: false },
  );
}
