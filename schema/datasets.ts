import {
  clearAccountDataset,
  deleteAccountDataset,
  getAccountDataset,
  listAccountDatasets,
} from '../src/endpoints/api/datasets.ts';
import { graphqlFieldOf } from '../src/endpoints/define.ts';
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
} from '../src/datasets/index.ts';
import { ValidationError } from '../src/shared/errors.ts';
import { signedFilePath } from '../src/runs/download-links.ts';
import { builder } from './builder.ts';
import { DownloadFormatEnum } from './console.ts';
import { NodeRef, registerNode } from './node.ts';
import { AFTER_DESCRIPTION, FIRST_DESCRIPTION, connectionOf, connectionType, pageSize } from './connection.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';
import { DatasetRowRef, resultRows, type ResultRow } from './results.ts';
import { ToolEnum } from './run.ts';

const MAX_ROWS = 100;

const DatasetRowConnectionRef = connectionType<ResultRow>('DatasetRow', DatasetRowRef as never, {
  description: 'A page of a dataset’s rows, oldest delivery first, typed by the dataset’s tool.',
  totalCount: 'Rows the dataset holds now (`rowCount`).',
});

export const DatasetRef = builder.objectRef<DatasetSummary>('Dataset');

DatasetRef.implement({
  description:
    'A named dataset of the account: one row a result (by its tool’s identity columns) across the runs that name ' +
    'it (`datasetName` on any start); with `onlyNew` a run delivers, and is billed for, only rows it has not ' +
    'delivered before. Rows go with their runs’ rows (48 hours after each run ends); what it delivered is ' +
    'remembered until it is cleared or deleted.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'ds_…: its global id.' }),
    name: t.exposeString('name', { description: 'The name runs give as `datasetName`.' }),
    tool: t.field({ type: ToolEnum, description: 'The tool whose rows it holds.', resolve: (d) => d.tool }),
    rowCount: t.exposeInt('rowCount', { description: 'Rows it holds now.' }),
    identityCount: t.exposeInt('identityCount', {
      description: 'Results it has delivered, remembered until it is cleared or deleted: what `onlyNew` skips.',
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When a run first named it.', resolve: (d) => d.createdAt }),
    lastDeliveredAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When a run last delivered a row to it.',
      resolve: (d) => d.lastDeliveredAt,
    }),
    rows: t.field({
      type: DatasetRowConnectionRef,
      description: 'Its rows, oldest delivery first, typed by its tool.',
      args: {
        first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_ROWS, 50) }),
        after: t.arg.string({ description: AFTER_DESCRIPTION }),
      },
      complexity: (args) => ({ field: 1, multiplier: Math.min(args.first ?? 50, MAX_ROWS) }),
      resolve: async (dataset, args, ctx) => {
        const limit = pageSize(args.first, { max: MAX_ROWS, byDefault: 50 });
        const page = await datasetRows(ctx.core.db, dataset, {
          limit,
          ...(args.after ? { after: decodeRowCursor(args.after) } : {}),
        });
        const cursors = page.cursors.map(encodeRowCursor);
        return connectionOf(resultRows(dataset.tool, page.rows), {
          cursorOf: (_, i) => cursors[i] ?? '',
          hasNextPage: page.next !== null,
          totalCount: dataset.rowCount,
        });
      },
    }),
  }),
});

registerNode('ds', 'Dataset', {
  keepsPrefix: true,
  localId: /^ds_[A-Za-z0-9]{1,64}$/,
  load: async (ids, ctx) => {
    const all = await listDatasets(ctx.core.db, ctx.principal.accountId);
    return ids.map((id) => all.find((d) => d.id === id) ?? null);
  },
});

const MAX_DATASETS = 100;

const DatasetConnectionRef = connectionType<DatasetSummary>('Dataset', DatasetRef, {
  description: 'A page of the account’s datasets, newest first.',
  totalCount: 'How many datasets the account has.',
});

builder.queryField(graphqlFieldOf(listAccountDatasets), (t) =>
  t.field({
    type: DatasetConnectionRef,
    description: 'The account’s named datasets, newest first.',
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_DATASETS, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
    },
    complexity: (args) => ({ field: 1, multiplier: Math.min(args.first ?? 20, MAX_DATASETS) }),
    resolve: async (_, args, ctx) => {
      const first = pageSize(args.first, { max: MAX_DATASETS, byDefault: 20 });
      const all = await listDatasets(ctx.core.db, ctx.principal.accountId);
      // Paged here, with the dataset's id as its cursor.
      const start = args.after ? all.findIndex((d) => d.id === args.after) + 1 : 0;
      if (start === 0 && args.after)
        throw new ValidationError([{ path: 'after', message: 'not a cursor returned by this API' }]);
      return connectionOf(all.slice(start, start + first), {
        cursorOf: (d) => d.id,
        hasNextPage: start + first < all.length,
        totalCount: all.length,
      });
    },
  }),
);

builder.queryField(graphqlFieldOf(getAccountDataset), (t) =>
  t.field({
    type: DatasetRef,
    nullable: true,
    description: 'A dataset of the account by id (ds_…) or name; null when it has none.',
    args: { dataset: t.arg.string({ required: true, description: 'Its id (ds_…) or name.' }) },
    resolve: (_, args, ctx) => datasetSummary(ctx.core.db, ctx.principal.accountId, args.dataset).catch(() => null),
  }),
);

type ClearDatasetPayload = { dataset?: DatasetSummary; forgotten?: number; userErrors: UserError[] };

const ClearDatasetPayloadRef = builder.objectRef<ClearDatasetPayload>('ClearDatasetPayload').implement({
  description: 'What `clearDataset` answers.',
  fields: (t) => ({
    dataset: t.field({
      type: DatasetRef,
      nullable: true,
      description: 'The dataset, cleared; null when refused.',
      resolve: (p) => p.dataset ?? null,
    }),
    forgotten: t.int({
      nullable: true,
      description: 'Results it no longer remembers delivering.',
      resolve: (p) => p.forgotten ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField(graphqlFieldOf(clearAccountDataset), (t) =>
  t.field({
    type: ClearDatasetPayloadRef,
    description:
      'Forgets the rows and results a dataset delivered: the next `onlyNew` run delivers everything again. ' +
      'User error DATASET_NOT_FOUND for no such dataset in this account.',
    args: { dataset: t.arg.string({ required: true, description: 'Its id (ds_…) or name.' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        const found = await findDataset(ctx.core.db, ctx.principal.accountId, args.dataset);
        const forgotten = await clearDataset(ctx.core.db, found);
        return { forgotten, dataset: await datasetSummary(ctx.core.db, ctx.principal.accountId, found.id) };
      }, ['dataset']),
  }),
);

type DeleteDatasetPayload = { deletedDatasetId?: string; userErrors: UserError[] };

const DeleteDatasetPayloadRef = builder.objectRef<DeleteDatasetPayload>('DeleteDatasetPayload').implement({
  description: 'What `deleteDataset` answers.',
  fields: (t) => ({
    deletedDatasetId: t.id({
      nullable: true,
      description: 'The id of the dataset deleted; null when refused.',
      resolve: (p) => p.deletedDatasetId ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField(graphqlFieldOf(deleteAccountDataset), (t) =>
  t.field({
    type: DeleteDatasetPayloadRef,
    description:
      'Deletes a dataset and what it remembers delivering; the runs keep their own rows. ' +
      'User error DATASET_NOT_FOUND for no such dataset in this account.',
    args: { dataset: t.arg.string({ required: true, description: 'Its id (ds_…) or name.' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        const found = await findDataset(ctx.core.db, ctx.principal.accountId, args.dataset);
        await deleteDataset(ctx.core.db, found);
        return { deletedDatasetId: found.id };
      }, ['dataset']),
  }),
);

builder.objectField(DatasetRef, 'downloadPath', (t) =>
  t.string({
    description:
      'A signed link (5 minutes, no key needed) to every row the dataset holds now in `format`, as a path on this ' +
      'server (`/api/downloads/…?…`), for pages the gateway serves, such as the console.',
    args: { format: t.arg({ type: DownloadFormatEnum, required: true, description: 'The file format.' }) },
    resolve: (d, { format }, ctx) => signedFilePath(ctx.core, ctx.principal, d.id, format),
  }),
);
