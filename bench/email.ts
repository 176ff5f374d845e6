/**
 * The `email` suite on its own, with other sizes (see bench/lib/email.ts). Prints the table; leaves
 * bench/results/latest.json alone.
 *
 *   node --import tsx bench/email.ts [--addresses N] [--domains N] [--sites N] [--rounds N] [--json FILE]
 */
import { readFlags, runStandalone } from './lib/harness.ts';
import { benchEmail, EMAIL_BENCH_DEFAULTS, email } from './lib/email.ts';

const flags = readFlags(
  'usage: node --import tsx bench/email.ts [--addresses N] [--domains N] [--sites N] [--rounds N] [--json FILE]',
  {
    addresses: { type: 'string' },
    domains: { type: 'string' },
    sites: { type: 'string' },
    rounds: { type: 'string' },
  },
);
const options = { ...EMAIL_BENCH_DEFAULTS };
for (const key of ['addresses', 'domains', 'sites', 'rounds'] as const) options[key] = flags.count(key) ?? options[key];

await runStandalone(email, () => benchEmail(options), { json: flags.json, save: false });
