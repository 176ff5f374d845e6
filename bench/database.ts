/**
 * Lead database benchmark on its own: searches, deep paging and enrichment on a catalog seeded at
 * `large` (see bench/lib/database.ts). Prints a table and stores the figures under `databaseApis` in
 * bench/results/latest.json, where `npm run bench -- --only database` puts them (the top-level
 * `database` there names the Postgres of the other suites); the other keys are kept.
 *
 *   node --import tsx bench/database.ts [--scale small|medium|large] [--iterations N] [--reuse] [--data-dir DIR]
 *                                       [--shared-buffers SIZE|default] [--json FILE] [--no-save]
 *
 * --reuse keeps the seeded database for the next run (DATABASE_URL: database bench_leads_<scale>;
 * embedded: a Postgres kept in --data-dir, default .data/bench-database), so only the first run seeds.
 * --shared-buffers sets the embedded server's shared_buffers (default 1GB, enough to hold the lead
 * tables warm; `default` keeps Postgres' 128MB). --no-save leaves bench/results/latest.json alone (quick
 * checks at a smaller scale).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { SCALES, type Scale } from '../db/seed/index.ts';
import { benchDatabase, formatDatabase, type DatabaseOptions } from './lib/database.ts';

const USAGE = 'usage: node --import tsx bench/database.ts [--scale small|medium|large] [--iterations N] [--reuse] [--data-dir DIR] [--shared-buffers SIZE|default] [--json FILE] [--no-save]';

function parseArgs(argv: string[]): DatabaseOptions & { json?: string; save?: boolean } {
  const options: DatabaseOptions & { json?: string; save?: boolean } = {};
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
    if (!['--scale', '--iterations', '--shared-buffers', '--data-dir', '--json'].includes(flag)) throw new Error(`unknown argument "${flag}"\n${USAGE}`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
    if (flag === '--scale') {
      if (!(value in SCALES)) throw new Error(`unknown scale "${value}"\n${USAGE}`);
      options.scale = value as Scale;
    } else if (flag === '--iterations') {
      const count = Number(value);
      if (!Number.isInteger(count) || count <= 0) throw new Error(`--iterations needs a positive whole number\n${USAGE}`);
      options.iterations = count;
    } else if (flag === '--shared-buffers') {
      options.sharedBuffers = value === 'default' ? null : value;
    } else if (flag === '--data-dir') {
      options.dataDir = value;
    } else if (flag === '--json') {
      options.json = value;
    } else {
      throw new Error(`unknown argument "${flag}"\n${USAGE}`);
    }
  }
  return options;
}

async function main() {
  const { json, save = true, ...options } = parseArgs(process.argv.slice(2));
  const result = await benchDatabase(options);
  console.log(formatDatabase(result));
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
  const measuredAt = { ...(previous.measuredAt as Record<string, string> | undefined), database: result.date };
  await writeFile(file, `${JSON.stringify({ ...previous, measuredAt, databaseApis: result }, null, 2)}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
