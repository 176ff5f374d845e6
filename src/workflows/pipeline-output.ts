/**
 * A pipeline's output as one table: each row of its first step joined with what the later steps found
 * for it, through each link's values and the fed tool's echo column (src/tools/steps.ts). A row with
 * several matches in the next step (a site with three contacts) gives one row for each, as a left join;
 * a row with none keeps its own cells and leaves the later steps' empty. Columns are the steps' own,
 * each named after its tool (`maps.name`, `website-finder.email`, `email-validator.status`).
 */
import type { Database } from '../../db/client.ts';
import type { Run } from '../../db/tables/runs.ts';
import type { Pipeline } from '../../db/tables/workflows.ts';
import { AppError } from '../shared/errors.ts';
import { getTool } from '../tools/index.ts';
import { cellValues, joinKey, STEP_LINKS, type StepLink } from '../tools/steps.ts';
import type { Column, Row } from '../tools/types.ts';
import { assertNotExpired, type ExportFormat, exportRows, opened } from '../runs/exports.ts';
import { runRows } from './pipeline-run.ts';
import { isPipelineEnded, type PipelineStep, stepRuns } from './pipelines.ts';

/** Each step's column prefix: its tool's name, numbered when a tool comes twice. */
function prefixes(steps: readonly PipelineStep[]): string[] {
  return steps.map((step, index) =>
    steps.findIndex((s) => s.tool === step.tool) === index ? `${step.tool}.` : `${step.tool}#${index + 1}.`,
  );
}

/** The joined table's columns: every step's, prefixed. */
export function pipelineColumns(steps: readonly PipelineStep[]): Column[] {
  const names = prefixes(steps);
  return steps.flatMap((step, index) =>
    getTool(step.tool).columns.map((c) => ({
      ...c,
      key: `${names[index]}${c.key}`,
      header: `${names[index]}${c.header}`,
      description: `${getTool(step.tool).title}: ${c.description}`,
    })),
  );
}

const linkFor = (step: PipelineStep): StepLink | undefined =>
  step.link
    ? STEP_LINKS.find((l) => l.to === step.tool && l.column === step.link?.column && l.field === step.link?.field)
    : undefined;

/** A later step's rows by the value each was found for (its echo column). */
async function indexStep(db: Database, run: Run | undefined, link: StepLink): Promise<Map<string, Row[]>> {
  const index = new Map<string, Row[]>();
  if (!run) return index;
  for await (const row of runRows(db, run.id)) {
    const echo = row[link.echo];
    if (typeof echo !== 'string') continue;
    const key = joinKey(echo);
    const list = index.get(key);
    if (list) list.push(row);
    else index.set(key, [row]);
  }
  return index;
}

/** The joined rows, streamed: the first step's rows read in pages, the later steps' held by value. */
export async function* joinedRows(db: Database, pipeline: Pipeline, runs: readonly Run[]): AsyncGenerator<Row> {
  const steps = pipeline.steps as PipelineStep[];
  const names = prefixes(steps);
  const links = steps.map(linkFor);
  const indexes: (Map<string, Row[]> | null)[] = [null];
  for (let i = 1; i < steps.length; i++) {
    const link = links[i];
    indexes.push(
      link
        ? await indexStep(
            db,
            runs.find((r) => r.pipelineStep === i),
            link,
          )
        : new Map(),
    );
  }
  const prefixed = (row: Row, i: number) =>
    Object.fromEntries(Object.entries(row).map(([k, v]) => [`${names[i]}${k}`, v]));
  // The rows one row of step i gives with the steps after it.
  const expand = (row: Row, i: number): Row[] => {
    const own = prefixed(row, i);
    const link = links[i + 1];
    const index = indexes[i + 1];
    if (!link || !index) return [own];
    const matches = cellValues(link, row).flatMap((value) => index.get(joinKey(value)) ?? []);
    if (matches.length === 0) return [own];
    return matches.flatMap((match) => expand(match, i + 1).map((rest) => ({ ...own, ...rest })));
  };
  const first = runs.find((r) => r.pipelineStep === 0);
  if (!first) return;
  for await (const row of runRows(db, first.id)) yield* expand(row, 0);
}

/**
 * The pipeline's table as a file in `format`, once it has ended; 409 `run_not_finished` before, 410
 * `results_expired` once its first step's rows are deleted. `watch` sees the rows on their way out
 * (the audit log counts them: its size is known only once joined).
 */
export async function exportPipeline(
  db: Database,
  pipeline: Pipeline,
  format: ExportFormat,
  now: Date,
  watch: (rows: AsyncIterable<Row>) => AsyncIterable<Row> = (rows) => rows,
) {
  if (!isPipelineEnded(pipeline.status))
    throw new AppError(
      409,
      'run_not_finished',
      'The pipeline has not ended yet: its table can be downloaded once its last step has run.',
    );
  assertNotExpired(pipeline, now);
  const runs = await stepRuns(db, pipeline.id);
  const steps = pipeline.steps as PipelineStep[];
  const rows = watch(joinedRows(db, pipeline, runs));
  return opened(exportRows(rows, pipelineColumns(steps), format, `pipeline-${pipeline.id}`));
}
