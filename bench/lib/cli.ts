import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { SCALES, type Scale } from '../../db/seed/index.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Flags every standalone benchmark takes: `--json FILE` writes the result, `--help` prints the usage. */
const COMMON: Options = { json: { type: 'string' }, help: { type: 'boolean', short: 'h' } };

/** Reads a standalone benchmark's flags (`--flag value` or `--flag=value`); unknown flags are refused with the usage. */
export function readFlags(argv: string[], usage: string, options: Options) {
  const fail = (message: string): never => {
    console.error(`${message}\n${usage}`);
    process.exit(1);
  };
  let values: Record<string, string | boolean | (string | boolean)[] | undefined> = {};
  try {
    values = parseArgs({ args: argv, options: { ...COMMON, ...options }, strict: true, allowPositionals: false }).values;
  } catch (err) {
    fail((err as Error).message);
  }
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  return {
    values,
    json: values.json as string | undefined,
    /** A positive whole number ("1_000_000" allowed), or undefined when the flag is absent. */
    count(flag: string): number | undefined {
      const text = values[flag] as string | undefined;
      if (text === undefined) return undefined;
      const n = Number(text.replaceAll('_', ''));
      if (!Number.isInteger(n) || n <= 0) fail(`--${flag} needs a positive whole number`);
      return n;
    },
    scale(): Scale | undefined {
      const text = values.scale as string | undefined;
      if (text === undefined) return undefined;
      if (!(text in SCALES)) fail(`unknown scale "${text}"`);
      return text as Scale;
    },
  };
}

/**
 * Runs a standalone benchmark: prints its table, writes `--json`, and (unless told not to) merges its
 * figures into bench/results/latest.json under `key`, leaving other suites' figures as they are.
 */
export async function runStandalone<R extends object>(
  bench: () => Promise<R>,
  format: (result: R) => string,
  options: { json?: string; save?: { suite: string; key: string } | false },
) {
  try {
    const result = await bench();
    console.log(format(result));
    if (options.json) await writeFile(options.json, `${JSON.stringify(result, null, 2)}\n`);
    if (!options.save) return;
    const dir = new URL('../results/', import.meta.url);
    await mkdir(dir, { recursive: true });
    const file = new URL('latest.json', dir);
    let previous: Record<string, unknown> = {};
    try {
      previous = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    } catch {
      previous = {};
    }
    const measuredAt = { ...(previous.measuredAt as Record<string, string> | undefined), [options.save.suite]: (result as { date?: string }).date ?? new Date().toISOString() };
    await writeFile(file, `${JSON.stringify({ ...previous, measuredAt, [options.save.key]: result }, null, 2)}\n`);
  } catch (err) {
    console.error(err);
    process.exit(1);
  }
}
