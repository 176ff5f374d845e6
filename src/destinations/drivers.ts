/**
 * A destination's driver: how its rows go to the provider, batch by batch, whatever the kind. Each says
 * its batch size (the provider's limit), may prepare the target before the first batch of an attempt
 * (a sheet's header row) and find rows an attempt cut short had sent but not recorded, and sends a
 * batch. What it keeps between batches (a sheet's rows) is the delivery's cursor, committed with each
 * acknowledged batch.
 */
import type { Destination } from '../../db/tables/destinations.ts';
import type { Core } from '../core.ts';
import { accessTokenOf, salesforceSessionOf, sheetsCredentialOf } from './connections.ts';
import { appendRows, openSheet, SHEETS_BATCH } from './providers/google.ts';
import { HUBSPOT_BATCH, HUBSPOT_CONTACTS, upsertHubspot } from './providers/hubspot.ts';
import {
  BULK_BATCH,
  BULK_FROM,
  bulkUpsertSalesforce,
  COLLECTION_BATCH,
  upsertSalesforceRecords,
} from './providers/salesforce.ts';
import type { BatchOutcome, MappedRow } from './providers/types.ts';
import type { Settings } from './targets.ts';

export type DriverDeps = Pick<Core, 'db' | 'config' | 'clock' | 'events'>;

/** What a delivery keeps between batches. */
export type Cursor = { sheetRows?: number };

export interface Driver {
  batchSize: number;
  /**
   * Before the first batch of an attempt: readies the target, and answers how many rows from `from`
   * the provider already holds from an attempt cut short (to be counted as sent, not sent again).
   */
  begin(from: number, cursor: Cursor): Promise<{ alreadySent: number; cursor: Cursor }>;
  send(batch: MappedRow[], cursor: Cursor, signal?: AbortSignal): Promise<BatchOutcome & { cursor: Cursor }>;
  /** The fields rows carry, in order (a sheet's header). */
  fields?: readonly string[];
}

/** A header's name as matched: letters and digits, lower case. */
const headerKey = (name: string) => name.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');

const nothingToPrepare = async (_from: number, cursor: Cursor) => ({ alreadySent: 0, cursor });

/**
 * Salesforce's Web-to-Lead fills a lead's required Last Name and Company with "[not provided]" when a
 * form leaves them out; a lead delivered without them is kept the same way.
 */
const NOT_PROVIDED = '[not provided]';

export function driverOf(core: DriverDeps, destination: Destination, total: number, fields: readonly string[]): Driver {
  const settings = destination.settings as Settings;
  const config = core.config.destinations;
  switch (destination.kind) {
    case 'hubspot_contacts':
    case 'hubspot_companies': {
      const target =
        destination.kind === 'hubspot_contacts'
          ? HUBSPOT_CONTACTS
          : ({ object: 'companies', idProperty: settings.idProperty ?? '', keyField: 'domain' } as const);
      return {
        batchSize: HUBSPOT_BATCH,
        begin: nothingToPrepare,
        async send(batch, cursor) {
          const token = await accessTokenOf(core, destination.connectionId);
          return { ...(await upsertHubspot(config.hubspot, token, target, batch)), cursor };
        },
      };
    }
    case 'salesforce_leads':
    case 'salesforce_contacts': {
      const lead = destination.kind === 'salesforce_leads';
      const target = { sobject: lead ? 'Lead' : 'Contact', externalIdField: settings.externalIdField ?? '' } as const;
      const bulk = total >= BULK_FROM;
      return {
        batchSize: bulk ? BULK_BATCH : COLLECTION_BATCH,
        begin: nothingToPrepare,
        async send(batch, cursor, signal) {
          const rows = batch.map((row) => ({
            row: row.row,
            fields: lead ? { LastName: NOT_PROVIDED, Company: NOT_PROVIDED, ...row.fields } : row.fields,
          }));
          const session = await salesforceSessionOf(core, destination.connectionId);
          const outcome = bulk
            ? await bulkUpsertSalesforce(config.salesforce, config.salesforce.app, session, target, rows, signal)
            : await upsertSalesforceRecords(config.salesforce, config.salesforce.app, session, target, rows);
          return { ...outcome, cursor };
        },
      };
    }
    case 'google_sheet': {
      const spreadsheetId = settings.spreadsheet ?? '';
      let title = settings.sheet ?? '';
      let columns: readonly string[] = fields;
      const credential = () => sheetsCredentialOf(core, destination.connectionId);
      return {
        batchSize: SHEETS_BATCH,
        async begin(from, cursor) {
          const sheet = await openSheet(config.google, await credential(), spreadsheetId, settings.sheet);
          title = sheet.title;
          const header = sheet.header.filter((h) => h.trim() !== '');
          // Rows follow a header already there, matched by name ("First name" is first_name); a new sheet
          // gets this delivery's.
          if (header.length > 0) {
            const wanted = new Map(fields.map((f) => [headerKey(f), f]));
            columns = sheet.header.map((h) => wanted.get(headerKey(h)) ?? '');
          } else {
            const written = await appendRows(config.google, await credential(), { spreadsheetId, title }, fields, [
              { row: -1, fields: Object.fromEntries(fields.map((f) => [f, f])) },
            ]);
            return { alreadySent: 0, cursor: { sheetRows: sheet.rowCount + written.appended } };
          }
          // Rows appended past the last recorded count: the batch an attempt cut short had sent.
          const alreadySent = from > 0 && cursor.sheetRows !== undefined ? sheet.rowCount - cursor.sheetRows : 0;
          return { alreadySent: Math.max(0, alreadySent), cursor: { sheetRows: sheet.rowCount } };
        },
        async send(batch, cursor) {
          const outcome = await appendRows(config.google, await credential(), { spreadsheetId, title }, columns, batch);
          return { ...outcome, cursor: { sheetRows: (cursor.sheetRows ?? 0) + outcome.appended } };
        },
      };
    }
    default:
      throw new Error(`destination kind ${destination.kind} sends no rows`);
  }
}
