import { z } from 'zod';
import { addressCells, addressList, lookUpAddresses, type LookupResult } from './lib/properties/lookup.ts';
import type { OwnerContact } from '../sources/properties.ts';
import { ADDRESS_COLUMNS, ownerContactPrice } from './property-lookup.ts';
import { cell, defineTool, type Row } from './types.ts';

export const propertyOwnerContactInput = z.object({
  addresses: addressList,
  fileName: z
    .string()
    .trim()
    .min(1)
    .max(50, 'fileName must be at most 50 characters')
    .optional()
    .describe('Export name, at most 50 characters.'),
});

const hasContact = (p: OwnerContact) => p.ownerPhones.length > 0 || p.ownerEmails.length > 0;

function toRow(input: string, result: LookupResult<OwnerContact>): Row {
  const p = result.status === 'found' ? result.property : null;
  return {
    ...addressCells(input, result),
    owner_name: p?.ownerName ?? null,
    owner_mailing_address: p?.ownerMailingAddress ?? null,
    owner_phones: p?.ownerPhones ?? [],
    owner_emails: p?.ownerEmails ?? [],
    message:
      result.status !== 'found'
        ? result.message
        : hasContact(result.property)
          ? null
          : 'No phone or email is known for this owner; not billed',
  };
}

export const propertyOwnerContactTool = defineTool({
  name: 'property-owner-contact',
  title: 'Property owner contact',
  description:
    'The owner of each property looked up: name, mailing address, phones and emails. ' +
    'Started by property lookup with includeOwnerContact.',
  rest: { path: '/api/v1/scrape/property-lookup' },
  graphql: { mutation: 'startPropertyOwnerContact', inputType: 'StartPropertyOwnerContactInput' },
  mcp: { name: 'property_owner_contact', toolset: 'enrichment' },
  linkedOnly: true,
  input: propertyOwnerContactInput,
  price: ownerContactPrice,
  cancellable: true,
  notes: [
    'Created by property lookup with includeOwnerContact: true, in the same transaction, ' +
      'over the same (de-duplicated) addresses; its id is ownerContactRunId in the start response, ' +
      'and parentRunId links it to the lookup run.',
    'Addresses are matched exactly as property lookup matches them, so row N of both runs is the same address.',
    `Billed ${ownerContactPrice.each} per property found whose owner has at least one phone or email; ` +
      'rows without any, and not_found, ambiguous and duplicate rows, are free.',
    'Cancellable like the property lookup it belongs to.',
  ],
  identity: ['owner_name', 'owner_mailing_address'],
  columns: [
    ...ADDRESS_COLUMNS,
    { key: 'owner_name', header: 'owner_name', description: 'Owner of record' },
    { key: 'owner_mailing_address', header: 'owner_mailing_address', description: "Owner's mailing address" },
    { key: 'owner_phones', header: 'owner_phones', description: "Owner's phone numbers", type: cell.texts },
    { key: 'owner_emails', header: 'owner_emails', description: "Owner's email addresses", type: cell.texts },
    {
      key: 'message',
      header: 'message',
      description: 'Why an address was not found, was ambiguous or a duplicate, or why a found owner was not billed',
    },
  ],
  requested: (input) => input.addresses.length,
  describeStart(input) {
    return {
      message: `Finding the owners of ${input.addresses.length} propert${input.addresses.length === 1 ? 'y' : 'ies'}`,
    };
  },
  async *run(ctx) {
    const source = ctx.sources.properties;
    yield* lookUpAddresses({
      addresses: ctx.input.addresses,
      source,
      load: (select) => source.ownerContacts(select),
      toRow,
      signal: ctx.signal,
    });
  },
});
