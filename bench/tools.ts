/**
 * Catalog tools benchmark on its own: one run of every catalog tool at `large`, rows per second from
 * start to SUCCEEDED and the run's time against the same rows selected directly in SQL (see
 * bench/lib/tools.ts). Prints a table and stores the figures under `tools` in bench/results/latest.json,
 * where `npm run bench -- --only tools` puts them; the other keys are kept.
 *
 *   node --import tsx bench/tools.ts [--scale small|medium|large] [--repetitions N] [--only tool1,tool2] [--reuse] [--data-dir DIR]
 *                                    [--shared-buffers SIZE|default] [--json FILE] [--no-save]
 *
 * --reuse keeps the seeded database for the next run (the one bench/database.ts keeps: DATABASE_URL's
 * bench_leads_<scale>, or an embedded Postgres in --data-dir, default .data/bench-database), so only the
 * first run seeds. --only takes tool names or case keys (maps, local-reviews, property-lookup, …).
 * --no-save leaves bench/results/latest.json alone (quick checks at a smaller scale or of some tools).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { SCALES, type Scale } from '../db/seed/index.ts';
import { benchTools, formatTools, type ToolsOptions } from './lib/tools.ts';

const USAGE =
  'usage: node --import tsx bench/tools.ts [--scale small|medium|large] [--repetitions N] [--only tool1,tool2] [--reuse] [--data-dir DIR] [--shared-buffers SIZE|default] [--json FILE] [--no-save]';

function parseArgs(argv: string[]): ToolsOptions & { json?: string; save?: boolean } {
  const options: ToolsOptions & { json?: string; save?: boolean } = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split('=', 2) as [string, string | undefined];
    if (flag === '--help' || flag === '-h') {
      console.log(USAGE);
      process.exit(0);
    }
    if (flag === '--reuse') {
      options.reuse = true;
      continue;
    }
    if (flag === '--no-save') {
      options.save = false;
      continue;
    }
    if (!['--scale', '--repetitions', '--only', '--shared-buffers', '--data-dir', '--json'].includes(flag)) throw new Error(`unknown argument "${flag}"\n${USAGE}`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
    if (flag === '--scale') {
      if (!(value in SCALES)) throw new Error(`unknown scale "${value}"\n${USAGE}`);
      options.scale = value as Scale;
    } else if (flag === '--repetitions') {
      const count = Number(value);
      if (!Number.isInteger(count) || count <= 0) throw new Error(`--repetitions needs a positive whole number\n${USAGE}`);
      options.repetitions = count;
    } else if (flag === '--only') {
      options.only = [...(options.only ?? []), ...value.split(',').map((s) => s.trim()).filter(Boolean)];
    } else if (flag === '--shared-buffers') {
      options.sharedBuffers = value === 'default' ? null : value;
    } else if (flag === '--data-dir') {
      options.dataDir = value;
    } else {
      options.json = value;
    }
  }
  return options;
}

async function main() {
  const { json, save = true, ...options } = parseArgs(process.argv.slice(2));
  const result = await benchTools(options);
  console.log(formatTools(result));
  if (json) await writeFile(json, `${JSON.stringify(result, null, 2)}\n`);
  if (!save) return;

  // Read-modify-write: other suites' figures stay as they are.
  const dir = new URL('./results/', import.meta.url);
  await mkdir(dir, { recursive: true });
  const file = new URL('latest.json', dir);
  let previous: Record<string, unknown> = {};
  try {
    previous = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  } catch {
    previous = {};
  }
  const measuredAt = { ...(previous.measuredAt as Record<string, string> | undefined), tools: result.date };
  await writeFile(file, `${JSON.stringify({ ...previous, measuredAt, tools: result }, null, 2)}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
