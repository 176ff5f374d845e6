/**
 * What a pipeline is as every face shows it: its steps with their links and runs, its costs; read by
 * id or listed. Declared, quoted and started in pipelines.ts, moved on in pipeline-run.ts.
 */
import { and, asc, desc, eq, lt, or } from 'drizzle-orm';
import type { Database, Transaction } from '../../db/client.ts';
import { runTable, type Run } from '../../db/tables/runs.ts';
import { type Pipeline, type PipelineStatus, pipelineTable } from '../../db/tables/workflows.ts';
import { microsToNumber } from '../billing/money.ts';
import { snapshotOf, type RunSnapshot } from '../runs/view.ts';
import { AppError } from '../shared/errors.ts';
import { unstorable } from '../shared/params.ts';
import { getTool, TOOLS } from '../tools/index.ts';
import { nextSteps, type StepLink } from '../tools/steps.ts';

/** The tools a step may run: those with a start of their own. */
export const STEP_TOOLS = TOOLS.filter((tool) => !tool.linkedOnly).map((tool) => tool.name) as [string, ...string[]];

/** A step as the pipeline keeps it: its tool, its input (the first's whole, a later's other fields), its link. */
export interface PipelineStep {
  tool: string;
  input: Record<string, unknown>;
  /** The link from the step before (src/tools/steps.ts): the column read and the field filled. */
  link: { column: string; field: string } | null;
}

export const linkOf = (step: PipelineStep): StepLink | undefined =>
  step.link ? STEP_LINKS_BY_KEY.get(linkKey(step.link.column, step.tool, step.link.field)) : undefined;
const linkKey = (column: string, to: string, field: string) => `${column}>${to}.${field}`;
const STEP_LINKS_BY_KEY = new Map(
  STEP_TOOLS.flatMap((from) => nextSteps(from)).map((l) => [linkKey(l.column, l.to, l.field), l]),
);

const PIPELINE_ENDS: readonly PipelineStatus[] = ['SUCCEEDED', 'FAILED', 'ABORTED'];
export const isPipelineEnded = (status: PipelineStatus) => PIPELINE_ENDS.includes(status);

export const pipelineNotFound = (id: string) =>
  new AppError(404, 'pipeline_not_found', `The account has no pipeline ${id}.`);

const sum = (values: readonly bigint[]) => values.reduce((a, b) => a + b, 0n);

/** A pipeline as every face shows it, with each step's run. */
export interface PipelineView {
  id: string;
  status: PipelineStatus;
  statusMessage: string;
  stoppedReason: 'budget_exhausted' | null;
  /** The step running now (or the last that ran), from 0. */
  step: number;
  steps: {
    index: number;
    tool: string;
    title: string;
    input: Record<string, unknown>;
    /** What feeds it from the step before. */
    from: { column: string; field: string; description: string } | null;
    /** Its upper bound, quoted at the start, USD. */
    quotedCost: number;
    run: RunSnapshot | null;
  }[];
  /** Every step's upper bound together, USD. */
  quotedCost: number;
  /** What the start held (at most the quote: less when the wallet held less), USD. */
  heldCost: number;
  /** What the steps' runs have been charged so far, USD. */
  cost: number;
  /** Rows delivered by the steps so far, together. */
  itemCount: number;
  datasetName: string | null;
  onlyNew: boolean;
  taskId: string | null;
  scheduleId: string | null;
  createdAt: string;
  finishedAt: string | null;
  expiresAt: string | null;
}

export function pipelineView(pipeline: Pipeline, runs: readonly Run[]): PipelineView {
  const steps = pipeline.steps as PipelineStep[];
  const quoted = (pipeline.quotedMicros as string[]).map((m) => BigInt(m));
  const snapshots = runs.map(snapshotOf);
  return {
    id: pipeline.id,
    status: pipeline.status,
    statusMessage: pipeline.statusMessage,
    stoppedReason: (pipeline.stoppedReason as 'budget_exhausted' | null) ?? null,
    step: pipeline.step,
    steps: steps.map((step, index) => {
      const link = linkOf(step);
      const run = runs.find((r) => r.pipelineStep === index);
      return {
        index,
        tool: step.tool,
        title: getTool(step.tool).title,
        input: step.input,
        from: link ? { column: link.column, field: link.field, description: link.description } : null,
        quotedCost: microsToNumber(quoted[index] ?? 0n),
        run: run ? snapshotOf(run) : null,
      };
    }),
    quotedCost: microsToNumber(sum(quoted)),
    heldCost: microsToNumber(pipeline.heldMicros),
    cost: snapshots.reduce((total, r) => total + r.cost, 0),
    itemCount: snapshots.reduce((total, r) => total + r.itemCount, 0),
    datasetName: pipeline.datasetName,
    onlyNew: pipeline.onlyNew,
    taskId: pipeline.taskId,
    scheduleId: pipeline.scheduleId,
    createdAt: pipeline.createdAt.toISOString(),
    finishedAt: pipeline.finishedAt?.toISOString() ?? null,
    expiresAt: pipeline.expiresAt?.toISOString() ?? null,
  };
}

/** The runs of a pipeline's steps, in step order. */
export const stepRuns = (db: Database | Transaction, pipelineId: string) =>
  db.select().from(runTable).where(eq(runTable.pipelineId, pipelineId)).orderBy(asc(runTable.pipelineStep));

/** A pipeline of the account; 404 `pipeline_not_found` for any other id (another account's included). */
export async function findPipeline(db: Database, accountId: string, id: string): Promise<Pipeline> {
  if (unstorable(id)) throw pipelineNotFound('');
  const [pipeline] = await db
    .select()
    .from(pipelineTable)
    .where(and(eq(pipelineTable.id, id), eq(pipelineTable.accountId, accountId)));
  if (!pipeline) throw pipelineNotFound(id);
  return pipeline;
}

export async function getPipeline(db: Database, accountId: string, id: string): Promise<PipelineView> {
  const pipeline = await findPipeline(db, accountId, id);
  return pipelineView(pipeline, await stepRuns(db, pipeline.id));
}

/** The account's pipelines, newest first, `limit` at most, before the cursor (created at, id) when given. */
export async function listPipelines(
  db: Database,
  accountId: string,
  page: { limit: number; before?: { createdAt: Date; id: string } },
): Promise<PipelineView[]> {
  const before = page.before;
  const pipelines = await db
    .select()
    .from(pipelineTable)
    .where(
      and(
        eq(pipelineTable.accountId, accountId),
        before
          ? or(
              lt(pipelineTable.createdAt, before.createdAt),
              and(eq(pipelineTable.createdAt, before.createdAt), lt(pipelineTable.id, before.id)),
            )
          : undefined,
      ),
    )
    .orderBy(desc(pipelineTable.createdAt), desc(pipelineTable.id))
    .limit(page.limit);
  if (pipelines.length === 0) return [];
  const runs = await db
    .select()
    .from(runTable)
    .where(or(...pipelines.map((p) => eq(runTable.pipelineId, p.id))))
    .orderBy(asc(runTable.pipelineStep));
  return pipelines.map((p) =>
    pipelineView(
      p,
      runs.filter((r) => r.pipelineId === p.id),
    ),
  );
}
