/**
 * Catalog loading benchmark on its own: seed a scale, then import a people CSV against a plain
 * `psql \copy` of the same file (see bench/lib/catalog.ts).
 *
 *   node --import tsx bench/catalog.ts [--scale small|medium|large] [--people N] [--json FILE]
 */
import { writeFile } from 'node:fs/promises';
import { SCALES, type Scale } from '../db/seed/index.ts';
import { benchCatalog, formatCatalog } from './lib/catalog.ts';

const USAGE = 'usage: node --import tsx bench/catalog.ts [--scale small|medium|large] [--people N] [--json FILE]';

function parseArgs(argv: string[]) {
  const options: { scale?: Scale; people?: number; json?: string } = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split('=', 2) as [string, string | undefined];
    if (flag === '--help' || flag === '-h') {
      console.log(USAGE);
      process.exit(0);
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
    if (flag === '--scale') {
      if (!(value in SCALES)) throw new Error(`unknown scale "${value}"\n${USAGE}`);
      options.scale = value as Scale;
    } else if (flag === '--people') {
      const people = Number(value.replaceAll('_', ''));
      if (!Number.isInteger(people) || people <= 0) throw new Error(`--people needs a positive whole number\n${USAGE}`);
      options.people = people;
    } else if (flag === '--json') {
      options.json = value;
    } else {
      throw new Error(`unknown argument "${flag}"\n${USAGE}`);
    }
  }
  return options;
}

async function main() {
  const { json, ...options } = parseArgs(process.argv.slice(2));
  const result = await benchCatalog(options);
  console.log(formatCatalog(result));
  if (json) await writeFile(json, `${JSON.stringify(result, null, 2)}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
