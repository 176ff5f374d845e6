/**
 * Catalog loading benchmark on its own: seed a scale, then import a people CSV against a plain
 * `psql \copy` of the same file (see bench/lib/catalog.ts).
 *
 *   node --import tsx bench/catalog.ts [--scale small|medium|large] [--people N] [--people-only] [--json FILE]
 *
 * `--people-only` seeds only companies and people and skips the comparison on criminal records.
 */
import { readFlags, runStandalone } from './lib/cli.ts';
import { benchCatalog, formatCatalog } from './lib/catalog.ts';

const USAGE = 'usage: node --import tsx bench/catalog.ts [--scale small|medium|large] [--people N] [--people-only] [--json FILE]';

const flags = readFlags(process.argv.slice(2), USAGE, { scale: { type: 'string' }, people: { type: 'string' }, 'people-only': { type: 'boolean' } });

await runStandalone(
  () => benchCatalog({ scale: flags.scale(), people: flags.count('people'), peopleOnly: flags.values['people-only'] === true }),
  formatCatalog,
  { json: flags.json },
);
