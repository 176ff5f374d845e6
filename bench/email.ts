/**
 * Network tools benchmark on its own: the email validator's checks against a bare SMTP loop, and the
 * crawler against bare page fetches, all on local servers (see bench/lib/email.ts).
 *
 *   node --import tsx bench/email.ts [--addresses N] [--domains N] [--sites N] [--rounds N] [--json FILE]
 */
import { readFlags, runStandalone } from './lib/cli.ts';
import { benchEmail, EMAIL_BENCH_DEFAULTS, formatEmail, type EmailBenchOptions } from './lib/email.ts';

const USAGE = 'usage: node --import tsx bench/email.ts [--addresses N] [--domains N] [--sites N] [--rounds N] [--json FILE]';

const flags = readFlags(process.argv.slice(2), USAGE, {
  addresses: { type: 'string' },
  domains: { type: 'string' },
  sites: { type: 'string' },
  rounds: { type: 'string' },
});
const options: EmailBenchOptions = { ...EMAIL_BENCH_DEFAULTS };
for (const key of ['addresses', 'domains', 'sites', 'rounds'] as const) options[key] = flags.count(key) ?? options[key];

await runStandalone(() => benchEmail(options), formatEmail, { json: flags.json });
