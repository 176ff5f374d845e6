import { Argument, Option, type Command } from 'commander';
import type { Database, Sql } from '../../db/client.ts';
import {
  DATASET_NAMES,
  ImportRejected,
  importFile,
  type ImportFormat,
  type ImportProgress,
  type RowError,
} from '../../db/import/index.ts';
import { importSuppression } from '../privacy/imports.ts';

type WithDatabase = <T>(fn: (db: Database, sql: Sql) => Promise<T>) => Promise<T>;

interface ImportCommandOptions {
  errors?: string;
  skipInvalid?: boolean;
  format?: ImportFormat;
}

function reportRows(errors: RowError[]): void {
  for (let i = 0; i < errors.length; i += 1000) {
    process.stderr.write(
      errors
        .slice(i, i + 1000)
        .map((e) => `line ${e.line}: ${e.reason}\n`)
        .join(''),
    );
  }
}

/** A single self-rewriting progress line on stderr, for terminals only. */
function progressLine(dataset: string) {
  let shown = 0;
  let started = Date.now();
  return {
    update(progress: ImportProgress) {
      const now = Date.now();
      if (progress.phase === 'reading' && now - shown < 250) return;
      shown = now;
      if (progress.rows === 0) started = now;
      const rate =
        progress.phase === 'reading' && now > started
          ? `, ${Math.round((progress.rows * 1000) / (now - started)).toLocaleString('en-US')} rows/s`
          : '';
      process.stderr.write(
        `\r\x1b[K${dataset}: ${progress.phase} (${progress.rows.toLocaleString('en-US')} rows read${rate})`,
      );
    },
    clear() {
      process.stderr.write('\r\x1b[K');
    },
  };
}

export function registerImportCommand(program: Command, withDatabase: WithDatabase): void {
  program
    .command('import')
    .description(
      'load a catalog dataset from a CSV or NDJSON file: ' +
        'every row or none, upserted on its natural key (see docs/datasets.md)',
    )
    .addArgument(new Argument('<dataset>', 'dataset').choices(DATASET_NAMES))
    .argument('<file>', 'a .csv file with a header row, or a .ndjson file')
    .option('--errors <path>', 'where to write bad rows as CSV (line,reason); default <file>.errors.csv')
    .option('--skip-invalid', 'load the good rows even when some are bad (bad rows are still reported)')
    .addOption(new Option('--format <format>', 'file format; default from the file name').choices(['csv', 'ndjson']))
    .action(async (dataset: string, file: string, opts: ImportCommandOptions) => {
      const controller = new AbortController();
      const interrupt = () => {
        if (controller.signal.aborted) process.exit(130);
        process.stderr.write('\ninterrupted: rolling back (interrupt again to quit at once)\n');
        controller.abort();
      };
      process.on('SIGINT', interrupt);
      process.on('SIGTERM', interrupt);
      const progress = process.stderr.isTTY ? progressLine(dataset) : undefined;
      try {
        const result = await withDatabase((_db, sql) =>
          importFile(sql, {
            dataset,
            suppressed: importSuppression,
            file,
            format: opts.format,
            skipInvalid: opts.skipInvalid,
            errorsFile: opts.errors,
            signal: controller.signal,
            onProgress: progress?.update,
          }),
        );
        progress?.clear();
        reportRows(result.errors);
        if (result.errorsFile) {
          process.stderr.write(
            `${result.errors.length} invalid row${result.errors.length === 1 ? '' : 's'} ` +
              `skipped (see ${result.errorsFile})\n`,
          );
        }
        console.log(JSON.stringify(result.summary));
      } catch (err) {
        progress?.clear();
        if (err instanceof ImportRejected) reportRows(err.errors);
        throw err;
      } finally {
        process.off('SIGINT', interrupt);
        process.off('SIGTERM', interrupt);
      }
    });
}
