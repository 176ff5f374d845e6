/**
 * Network tools benchmark on its own: the email validator's checks against a bare SMTP loop, and the
 * crawler against bare page fetches, all on local servers (see bench/lib/email.ts).
 *
 *   node --import tsx bench/email.ts [--addresses N] [--domains N] [--sites N] [--rounds N] [--json FILE]
 */
import { writeFile } from 'node:fs/promises';
import { benchEmail, EMAIL_BENCH_DEFAULTS, formatEmail, type EmailBenchOptions } from './lib/email.ts';

const USAGE = 'usage: node --import tsx bench/email.ts [--addresses N] [--domains N] [--sites N] [--rounds N] [--json FILE]';

function parseArgs(argv: string[]) {
  const options: EmailBenchOptions & { json?: string } = { ...EMAIL_BENCH_DEFAULTS };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split('=', 2) as [string, string | undefined];
    if (flag === '--help' || flag === '-h') {
      console.log(USAGE);
      process.exit(0);
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
    if (flag === '--json') {
      options.json = value;
      continue;
    }
    const key = { '--addresses': 'addresses', '--domains': 'domains', '--sites': 'sites', '--rounds': 'rounds' }[flag] as keyof EmailBenchOptions | undefined;
    const n = Number(value.replaceAll('_', ''));
    if (!key) throw new Error(`unknown argument "${flag}"\n${USAGE}`);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${flag} needs a positive whole number\n${USAGE}`);
    options[key] = n;
  }
  return options;
}

async function main() {
  const { json, ...options } = parseArgs(process.argv.slice(2));
  const result = await benchEmail(options);
  console.log(formatEmail(result));
  if (json) await writeFile(json, `${JSON.stringify(result, null, 2)}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
