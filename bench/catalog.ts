/**
 * The `catalog` suite on its own, at another scale or file size (see bench/lib/catalog.ts). Prints
 * the table; leaves bench/results/latest.json alone.
 *
 *   node --import tsx bench/catalog.ts [--scale small|medium|large] [--people N] [--people-only] [--json FILE]
 *
 * `--people-only` seeds only companies and people and skips the comparison on criminal records.
 */
import { readFlags, runStandalone } from './lib/harness.ts';
import { benchCatalog, catalog } from './lib/catalog.ts';

const flags = readFlags('usage: node --import tsx bench/catalog.ts [--scale small|medium|large] [--people N] [--people-only] [--json FILE]', {
  scale: { type: 'string' },
  people: { type: 'string' },
  'people-only': { type: 'boolean' },
});

await runStandalone(catalog, () => benchCatalog({ scale: flags.scale(), people: flags.count('people'), peopleOnly: flags.flag('people-only') }), { json: flags.json, save: false });
