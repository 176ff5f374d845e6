/**
 * What each kind of destination writes to, and its settings: the HubSpot object and the property it is
 * matched by, the Salesforce object and its external-id field, the spreadsheet and sheet, the Slack
 * channel. A destination's settings are checked at the provider when it is made (the property is
 * unique, the field is an external id, the spreadsheet is shared with the connection), so a mistake is
 * said at its field then, not found at the first delivery.
 */
import { z } from 'zod';
import type { Connection } from '../../db/tables/destinations.ts';
import type { Core } from '../core.ts';
import { ValidationError } from '../shared/errors.ts';
import { accessTokenOf, providerDown, salesforceSessionOf, sheetsCredentialOf } from './connections.ts';
import { openSheet, SheetMissing } from './providers/google.ts';
import { hubspotUniqueProperties } from './providers/hubspot.ts';
import { describeSalesforce } from './providers/salesforce.ts';
import { GrantRefused } from './providers/types.ts';

/**
 * The kinds this service delivers to, with the provider each needs, the settings each requires and those
 * it may take (`optional`).
 */
export const KINDS = {
  hubspot_contacts: { provider: 'hubspot', title: 'HubSpot contacts (upserted by email)', settings: [] },
  hubspot_companies: {
    provider: 'hubspot',
    title: 'HubSpot companies (upserted by domain, under a unique property)',
    settings: ['idProperty'],
  },
  salesforce_leads: {
    provider: 'salesforce',
    title: 'Salesforce leads (upserted by an external-id field)',
    settings: ['externalIdField'],
  },
  salesforce_contacts: {
    provider: 'salesforce',
    title: 'Salesforce contacts (upserted by an external-id field)',
    settings: ['externalIdField'],
  },
  google_sheet: {
    provider: 'google',
    title: 'A Google Sheet (rows appended, the header row written once)',
    settings: ['spreadsheet'],
    optional: ['sheet'],
  },
  slack_summary: {
    provider: 'slack',
    title: 'A Slack channel (a summary with counts and a download link)',
    settings: ['channel'],
  },
} as const;
export type DeliverableKind = keyof typeof KINDS;
/** The settings a kind requires, then those it may take. */
export const settingsOf = (kind: DeliverableKind) => ({
  required: KINDS[kind].settings as readonly SettingName[],
  optional: ((KINDS[kind] as { optional?: readonly SettingName[] }).optional ?? []) as readonly SettingName[],
});
export const KIND_NAMES = Object.keys(KINDS) as [DeliverableKind, ...DeliverableKind[]];

const apiName = z
  .string()
  .trim()
  .regex(/^[A-Za-z][A-Za-z0-9_]{0,79}$/, 'must be an API name (letters, digits and _)');

/** The settings a destination may carry; which each kind requires is in KINDS. */
export const settingsFields = {
  channel: z
    .string()
    .trim()
    .min(1)
    .max(80)
    .optional()
    .describe('slack_summary: the channel (its id, or #name) the summary goes to.'),
  idProperty: apiName
    .optional()
    .describe('hubspot_companies: a company property with unique values that holds the domain (e.g. leadgate_domain).'),
  externalIdField: apiName
    .optional()
    .describe(
      'salesforce_leads, salesforce_contacts: the External ID field records are matched by (e.g. Leadgate_Id__c).',
    ),
  spreadsheet: z
    .string()
    .trim()
    .min(1)
    .max(300)
    .optional()
    .describe('google_sheet: the spreadsheet, its id or its URL.'),
  sheet: z.string().trim().min(1).max(100).optional().describe('google_sheet: the sheet (tab); the first by default.'),
};
type SettingName = keyof typeof settingsFields;
export type Settings = { [K in SettingName]?: string };

const SETTING_WORDS: Record<string, string> = {
  channel: 'the channel the summary goes to',
  idProperty: 'the unique company property that holds the domain',
  externalIdField: 'the External ID field records are matched by',
  spreadsheet: 'the spreadsheet',
};

/** A spreadsheet id, from itself or a spreadsheet's URL. */
export function spreadsheetIdOf(value: string): string | undefined {
  const fromUrl = /\/spreadsheets\/d\/([A-Za-z0-9_-]+)/.exec(value)?.[1];
  const id = fromUrl ?? value;
  return /^[A-Za-z0-9_-]{10,100}$/.test(id) ? id : undefined;
}

const refuse = (path: string, message: string) => new ValidationError([{ path, message }]);

/**
 * Checks a destination's settings for its kind, at the provider where they name something there, and
 * answers them as kept (a spreadsheet URL kept as its id; only the kind's own settings).
 */
export async function checkSettings(
  core: Pick<Core, 'db' | 'config' | 'clock' | 'events'>,
  kind: DeliverableKind,
  connection: Connection,
  input: Settings,
): Promise<Settings> {
  for (const name of KINDS[kind].settings) if (!input[name]) throw refuse(name, `${SETTING_WORDS[name]} is required`);
  const config = core.config.destinations;
  try {
    if (kind === 'hubspot_companies') {
      const token = await accessTokenOf(core, connection.id);
      const unique = await hubspotUniqueProperties(config.hubspot, token, 'companies');
      if (!unique.includes(input.idProperty ?? ''))
        throw refuse(
          'idProperty',
          unique.length > 0
            ? `must be a company property with unique values: ${unique.join(', ')}`
            : 'the portal has no company property with unique values: create one (single-line text, unique) first',
        );
      return { idProperty: input.idProperty };
    }
    if (kind === 'salesforce_leads' || kind === 'salesforce_contacts') {
      const sobject = kind === 'salesforce_leads' ? 'Lead' : 'Contact';
      const app = config.salesforce.app;
      const described = await describeSalesforce(
        config.salesforce,
        app,
        await salesforceSessionOf(core, connection.id),
        sobject,
      );
      if (!described.externalIds.includes(input.externalIdField ?? ''))
        throw refuse(
          'externalIdField',
          described.externalIds.length > 0
            ? `must be an External ID field of ${sobject}: ${described.externalIds.join(', ')}`
            : `${sobject} has no External ID field: create one (text, External ID, unique) first`,
        );
      return { externalIdField: input.externalIdField };
    }
    if (kind === 'google_sheet') {
      const spreadsheetId = spreadsheetIdOf(input.spreadsheet ?? '');
      if (!spreadsheetId) throw refuse('spreadsheet', 'must be a spreadsheet’s id or its URL');
      try {
        await openSheet(config.google, await sheetsCredentialOf(core, connection.id), spreadsheetId, input.sheet);
      } catch (err) {
        if (err instanceof SheetMissing) throw refuse('sheet', err.message);
        const shared = connection.externalName
          ? `shared with ${connection.externalName}`
          : 'shared with the connection';
        if (!(err instanceof GrantRefused) && /permission|not found/i.test((err as Error).message))
          throw refuse('spreadsheet', `Google has no such spreadsheet ${shared}`);
        throw err;
      }
      return { spreadsheet: spreadsheetId, ...(input.sheet ? { sheet: input.sheet } : {}) };
    }
    if (kind === 'slack_summary') return { channel: input.channel };
    return {};
  } catch (err) {
    if (err instanceof GrantRefused) throw refuse('connection', `the provider refused the connection: ${err.message}`);
    if (err instanceof ValidationError) throw err;
    throw providerDown(connection.provider, err);
  }
}
