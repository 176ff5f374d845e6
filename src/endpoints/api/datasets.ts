import { z } from 'zod';
import {
  clearDataset,
  datasetRows,
  datasetSummary,
  decodeRowCursor,
  deleteDataset,
  encodeRowCursor,
  findDataset,
  listDatasets,
  type DatasetSummary,
} from '../../datasets/index.ts';
import { fromZodError } from '../../shared/errors.ts';
import { defineEndpoint, type RestRequest } from '../define.ts';

const PATH = '/api/v1/datasets';
const ONE = `${PATH}/:id`;
const idOf = (request: RestRequest) => request.params.id ?? '';

const datasetView = z
  .object({
    id: z.string().describe('ds_…'),
    name: z.string(),
    tool: z.string().describe('The tool whose rows it holds.'),
    rowCount: z.int().describe('Rows it holds now: one a result, while the run that delivered it keeps its rows.'),
    identityCount: z
      .int()
      .describe('Results it has delivered, kept until it is cleared or deleted: what only-new delivery skips.'),
    createdAt: z.string(),
    lastDeliveredAt: z.string().nullable(),
  })
  .strict();

const viewOf = (d: DatasetSummary) => ({
  id: d.id,
  name: d.name,
  tool: d.tool,
  rowCount: d.rowCount,
  identityCount: d.identityCount,
  createdAt: d.createdAt.toISOString(),
  lastDeliveredAt: d.lastDeliveredAt?.toISOString() ?? null,
});

export const rowsParams = z
  .object({
    limit: z.coerce
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(1_000, 'must be at most 1000')
      .default(100)
      .describe('Rows at most; default 100, at most 1,000.'),
    after: z.string().optional().describe('The nextAfter of the page before.'),
  })
  .strict();

function parseRowsParams(query: unknown) {
  const parsed = rowsParams.safeParse(query ?? {});
  if (!parsed.success) throw fromZodError(parsed.error);
  return parsed.data;
}

const idArgs = z
  .object({ dataset: z.string().min(1, 'must not be empty').describe('The dataset’s id (ds_…) or name.') })
  .strict();

export const listAccountDatasets = defineEndpoint({
  name: 'listDatasets',
  title: "The account's datasets",
  tag: 'Datasets',
  description:
    'Named datasets keep one row a result across the runs that name them (datasetName on any start); ' +
    'with onlyNew a run delivers, and is billed for, only rows its dataset has not delivered before.',
  rest: { path: PATH, methods: ['get'], input: () => undefined, ok: 'Newest first.' },
  graphql: { field: 'datasets' },
  mcp: {
    tool: 'list_datasets',
    toolset: 'datasets',
    title: 'List datasets',
    description: [
      "The account's named datasets with their row counts. A start with datasetName adds its rows to one; " +
        'with onlyNew it delivers and bills only rows the dataset has not delivered before.',
    ],
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  response: z.object({ datasets: z.array(datasetView) }).strict(),
  errors: {},
  handler: ({ core, principal }) => listDatasets(core.db, principal.accountId),
  respond: (datasets) => ({ datasets: datasets.map(viewOf) }),
});

export const getAccountDataset = defineEndpoint({
  name: 'getDataset',
  title: 'A dataset',
  tag: 'Datasets',
  rest: { path: ONE, methods: ['get'], input: idOf, ok: 'The dataset, with its counts.' },
  graphql: { field: 'dataset' },
  response: z.object({ dataset: datasetView }).strict(),
  errors: { 404: ['dataset_not_found'] },
  handler: ({ core, principal }, id: string) => datasetSummary(core.db, principal.accountId, id),
  respond: (dataset) => ({ dataset: viewOf(dataset) }),
});

export const listDatasetRows = defineEndpoint({
  name: 'listDatasetRows',
  title: "A dataset's rows",
  tag: 'Datasets',
  description:
    'In the order they were delivered, oldest first; page with after = nextAfter until it is null. ' +
    'A row goes with its run’s rows (48 hours after the run ended); its identity stays, for only-new delivery.',
  rest: {
    path: `${ONE}/rows`,
    methods: ['get'],
    input: (request) => ({ dataset: idOf(request), query: request.query }),
    ok: 'One page of rows, in the columns of the dataset’s tool.',
  },
  graphql: { field: 'Dataset.rows' },
  mcp: {
    tool: 'get_dataset_rows',
    toolset: 'datasets',
    title: 'Read a dataset',
    description: ['A page of a dataset’s rows, oldest first; send nextAfter as after for the next page.'],
    args: idArgs.extend(rowsParams.shape),
    example: { dataset: 'dentists', limit: 10 },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  request: rowsParams,
  response: z
    .object({
      rows: z.array(z.record(z.string(), z.unknown())),
      nextAfter: z.string().nullable().describe('Cursor of the next page (send it as after); null at the end.'),
    })
    .strict(),
  errors: { 400: ['validation_failed'], 404: ['dataset_not_found'] },
  handler: async ({ core, principal }, input: { dataset: string; query?: unknown } & Record<string, unknown>) => {
    const { dataset: id, query, ...args } = input;
    const params = parseRowsParams(query ?? args);
    const dataset = await findDataset(core.db, principal.accountId, id);
    return datasetRows(core.db, dataset, {
      limit: params.limit,
      ...(params.after ? { after: decodeRowCursor(params.after) } : {}),
    });
  },
  respond: (page) => ({ rows: page.rows, nextAfter: page.next ? encodeRowCursor(page.next) : null }),
});

export const clearAccountDataset = defineEndpoint({
  name: 'clearDataset',
  title: 'Clear a dataset',
  tag: 'Datasets',
  description:
    'Forgets the rows and results it delivered: the next only-new run delivers everything again. The dataset stays; ' +
    'the runs keep their own rows.',
  rest: { path: `${ONE}/clear`, methods: ['post'], input: idOf, ok: 'Cleared: how many results were forgotten.' },
  graphql: { field: 'clearDataset' },
  mcp: {
    tool: 'clear_dataset',
    toolset: 'datasets',
    title: 'Clear a dataset',
    description: ['Forgets what a dataset delivered, so the next only-new run delivers everything again.'],
    args: idArgs,
    example: { dataset: 'dentists' },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  response: z.object({ forgotten: z.int().describe('Results forgotten.') }).strict(),
  errors: { 404: ['dataset_not_found'] },
  handler: async ({ core, principal }, input: string | { dataset: string }) => {
    const dataset = await findDataset(core.db, principal.accountId, typeof input === 'string' ? input : input.dataset);
    return clearDataset(core.db, dataset);
  },
  respond: (forgotten) => ({ forgotten }),
});

export const deleteAccountDataset = defineEndpoint({
  name: 'deleteDataset',
  title: 'Delete a dataset',
  tag: 'Datasets',
  description: 'The dataset and the results it delivered go; the runs keep their own rows.',
  rest: { path: ONE, methods: ['delete'], status: 204, input: idOf, ok: 'Deleted.' },
  graphql: { field: 'deleteDataset' },
  mcp: {
    tool: 'delete_dataset',
    toolset: 'datasets',
    title: 'Delete a dataset',
    description: ['Deletes a dataset and what it remembers delivering; the runs keep their own rows.'],
    args: idArgs,
    example: { dataset: 'dentists' },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  errors: { 404: ['dataset_not_found'] },
  handler: async ({ core, principal }, input: string | { dataset: string }) => {
    const dataset = await findDataset(core.db, principal.accountId, typeof input === 'string' ? input : input.dataset);
    await deleteDataset(core.db, dataset);
  },
});
