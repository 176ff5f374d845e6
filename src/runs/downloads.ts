/**
 * The files the download routes serve (`/api/downloads/<id>`, a dataset's export, a pipeline's table,
 * the overview's results): a run's rows, a dataset's or a pipeline's table, for whom they are. A file
 * of more than DOWNLOAD_AUDIT_ROWS rows leaves an event in the audit log, written before the rows go:
 * a run's and a dataset's size is known first; a pipeline's joined table is counted as it is read, and
 * its event written when row N + 1 is, before that row is sent (a failure then breaks the transfer).
 * Every file about to be opened marks the account's first download (the console's checklist reads it),
 * before the file starts: nothing may be awaited between a file's start and its sending, or its failure
 * part-way would turn into an error answer instead of a broken transfer.
 */
import type { Core } from '../core.ts';
import { recordFirstDownload } from '../accounts/first-download.ts';
import { DOWNLOAD_AUDIT_ROWS } from '../audit/actions.ts';
import { type AuditActor, type AuditClient, recordAudit } from '../audit/audit.ts';
import { allDatasetRows, datasetSummary } from '../datasets/index.ts';
import { exportPipeline } from '../workflows/pipeline-output.ts';
import { findPipeline } from '../workflows/pipelines.ts';
import { getTool } from '../tools/index.ts';
import type { Row } from '../tools/types.ts';
import { assertDownloadable, type ExportFormat, exportRows, openExport, opened, rowsInRange } from './exports.ts';
import { getRun } from './read.ts';

/** Who downloads: the account, and the actor and client the audit log names (`byCaller`, or a signed link's). */
export interface Downloader {
  accountId: string;
  actor: AuditActor;
  client?: AuditClient | null;
}

type Deps = Pick<Core, 'db' | 'sql' | 'catalogReader' | 'clock'>;

/** A run's rows (all, or a range) as a file. */
export async function openRunFile(
  core: Deps,
  who: Downloader,
  runId: string,
  format: ExportFormat,
  range: { offset: number; limit?: number } = { offset: 0 },
) {
  const run = await getRun(core.db, who.accountId, runId);
  assertDownloadable(run, core.clock());
  const rows = rowsInRange(run.itemCount, range);
  if (rows > DOWNLOAD_AUDIT_ROWS)
    await recordAudit(core.db, {
      ...who,
      action: 'run.downloaded',
      target: { type: 'run', id: run.id, label: run.fileName ?? run.tool },
      details: { format, rows, ...(range.offset > 0 ? { offset: range.offset } : {}) },
    });
  await recordFirstDownload(core.db, who.accountId);
  return { id: run.id, file: await openExport(core, run, getTool(run.tool).columns, format, range) };
}

/** Every row a dataset holds now, as a file. */
export async function openDatasetFile(core: Deps, who: Downloader, idOrName: string, format: ExportFormat) {
  const dataset = await datasetSummary(core.db, who.accountId, idOrName);
  if (dataset.rowCount > DOWNLOAD_AUDIT_ROWS)
    await recordAudit(core.db, {
      ...who,
      action: 'dataset.exported',
      target: { type: 'dataset', id: dataset.id, label: dataset.name },
      details: { format, rows: dataset.rowCount },
    });
  const columns = getTool(dataset.tool).columns;
  await recordFirstDownload(core.db, who.accountId);
  return {
    id: dataset.id,
    file: await opened(exportRows(allDatasetRows(core.db, dataset), columns, format, dataset.name)),
  };
}

/** A pipeline's joined table, as a file. */
export async function openPipelineFile(core: Deps, who: Downloader, id: string, format: ExportFormat) {
  const pipeline = await findPipeline(core.db, who.accountId, id);
  const record = () =>
    recordAudit(core.db, {
      ...who,
      action: 'pipeline.downloaded',
      target: { type: 'pipeline', id: pipeline.id },
      details: { format, rowsOver: DOWNLOAD_AUDIT_ROWS },
    });
  async function* counted(rows: AsyncIterable<Row>): AsyncGenerator<Row> {
    let sent = 0;
    for await (const row of rows) {
      sent += 1;
      if (sent === DOWNLOAD_AUDIT_ROWS + 1) await record();
      yield row;
    }
  }
  await recordFirstDownload(core.db, who.accountId);
  return { id: pipeline.id, file: await exportPipeline(core.db, pipeline, format, core.clock(), counted) };
}

/** The file an id names on the download route: a pipeline's table (`plp_…`), a dataset (`ds_…`) or a run. */
export function openFile(
  core: Deps,
  who: Downloader,
  id: string,
  format: ExportFormat,
  range: { offset: number; limit?: number } = { offset: 0 },
) {
  if (id.startsWith('plp_')) return openPipelineFile(core, who, id, format);
  if (id.startsWith('ds_')) return openDatasetFile(core, who, id, format);
  return openRunFile(core, who, id, format, range);
}
