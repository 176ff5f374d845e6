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
import { readFlags, runStandalone } from './lib/cli.ts';
import { benchTools, formatTools, type ToolsOptions } from './lib/tools.ts';

const USAGE =
  'usage: node --import tsx bench/tools.ts [--scale small|medium|large] [--repetitions N] [--only tool1,tool2] [--reuse] [--data-dir DIR] [--shared-buffers SIZE|default] [--json FILE] [--no-save]';

const flags = readFlags(process.argv.slice(2), USAGE, {
  scale: { type: 'string' },
  repetitions: { type: 'string' },
  only: { type: 'string', multiple: true },
  reuse: { type: 'boolean' },
  'data-dir': { type: 'string' },
  'shared-buffers': { type: 'string' },
  'no-save': { type: 'boolean' },
});
const sharedBuffers = flags.values['shared-buffers'] as string | undefined;
const only = (flags.values.only as string[] | undefined)?.flatMap((v) => v.split(',').map((s) => s.trim()).filter(Boolean));
const options: ToolsOptions = {
  scale: flags.scale(),
  repetitions: flags.count('repetitions'),
  only,
  reuse: flags.values.reuse === true || undefined,
  dataDir: flags.values['data-dir'] as string | undefined,
  ...(sharedBuffers === undefined ? {} : { sharedBuffers: sharedBuffers === 'default' ? null : sharedBuffers }),
};

await runStandalone(() => benchTools(options), formatTools, {
  json: flags.json,
  save: flags.values['no-save'] ? false : { suite: 'tools', key: 'tools' },
});
