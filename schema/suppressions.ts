import { SUPPRESSION_KINDS, SUPPRESSION_SOURCES, type Suppression } from '../db/tables/privacy.ts';
import {
  addAccountSuppressions,
  listAccountSuppressions,
  removeAccountSuppression,
} from '../src/endpoints/api/privacy.ts';
import { graphqlFieldOf } from '../src/endpoints/define.ts';
import { callEndpoint } from '../src/http/pipeline.ts';
import { findEntry, listAccountList, MAX_ENTRIES } from '../src/privacy/lists.ts';
import { countSuppressions } from '../src/privacy/suppression.ts';
import { builder } from './builder.ts';
import { AFTER_DESCRIPTION, connectionOf, connectionType, FIRST_DESCRIPTION } from './connection.ts';
import { enumName } from './connected-providers.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';
import { pageComplexity } from './identity/lists.ts';
import { NodeRef, registerNode } from './node.ts';

/**
 * The account's do-not-contact list (src/privacy): people no run, search or enrichment of the account
 * returns. The same operations as REST's and MCP's, through their declarations.
 */

const KIND_TEXT: Record<(typeof SUPPRESSION_KINDS)[number], string> = {
  email: 'An e-mail address, anywhere in a row.',
  domain: 'Every address at a domain.',
  phone: 'A phone number (E.164; read as a US number without a country code).',
  profile: 'A social profile URL (LinkedIn, X, Facebook, Instagram, GitHub).',
  hash: 'A hashed identifier as a California DROP list carries it.',
};
const SOURCE_TEXT: Record<(typeof SUPPRESSION_SOURCES)[number], string> = {
  account: 'Added by the account.',
  operator: 'Added by this server’s operator.',
  opt_out: 'The person opted out.',
  erasure: 'The person’s data was erased at their request.',
  drop: 'A California DROP deletion request.',
};

const KindEnum = builder.enumType('SuppressionKind', {
  description: 'What a do-not-contact entry names.',
  values: Object.fromEntries(SUPPRESSION_KINDS.map((k) => [enumName(k), { value: k, description: KIND_TEXT[k] }])),
});
const SourceEnum = builder.enumType('SuppressionSource', {
  description: 'Where a do-not-contact entry came from.',
  values: Object.fromEntries(SUPPRESSION_SOURCES.map((s) => [enumName(s), { value: s, description: SOURCE_TEXT[s] }])),
});

const EntryRef = builder.objectRef<Suppression>('DoNotContactEntry').implement({
  description: 'A person no row of the account may carry.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'sup_…' }),
    kind: t.field({ type: KindEnum, description: 'What it names.', resolve: (s) => s.kind }),
    value: t.exposeString('value', { description: 'As compared: lower case, a phone in E.164.' }),
    source: t.field({ type: SourceEnum, description: 'Where it came from.', resolve: (s) => s.source }),
    note: t.exposeString('note', { nullable: true, description: 'Why, as noted when added.' }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was added.', resolve: (s) => s.createdAt }),
  }),
});

registerNode('sup', 'DoNotContactEntry', {
  keepsPrefix: true,
  localId: /^sup_[A-Za-z0-9_-]{1,64}$/,
  load: (ids, ctx) =>
    Promise.all(ids.map((id) => findEntry(ctx.core.db, ctx.principal.accountId, id).catch(() => null))),
});

const EntryConnectionRef = connectionType<Suppression>('DoNotContactEntry', EntryRef, {
  description: 'A page of the account’s do-not-contact list, newest first.',
  totalCount: 'How many entries the account’s list holds.',
});

builder.queryField('doNotContact', (t) =>
  t.field({
    type: EntryConnectionRef,
    description: 'The account’s do-not-contact list, newest first.',
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(100, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
    },
    complexity: pageComplexity,
    resolve: async (_, args, ctx) => {
      await callEndpoint(ctx.core, ctx.principal, listAccountSuppressions, '', { shape: () => undefined });
      const first = Math.min(Math.max(args.first ?? 20, 1), 100);
      const page = await listAccountList(ctx.core.db, ctx.principal.accountId, args.after ?? undefined);
      return connectionOf(page.slice(0, first), {
        cursorOf: (s) => s.id,
        hasNextPage: page.length > first,
        totalCount: () => countSuppressions(ctx.core.db, ctx.principal.accountId),
      });
    },
  }),
);

const EntryInputRef = builder.inputType('DoNotContactEntryInput', {
  description: 'A person to add.',
  fields: (t) => ({
    kind: t.field({ type: KindEnum, required: true, description: 'What the value is.' }),
    value: t.string({ required: true, description: 'The address, domain, number or URL.' }),
  }),
});
const AddInputRef = builder.inputType('AddToDoNotContactInput', {
  description: `Up to ${MAX_ENTRIES} people to add.`,
  fields: (t) => ({
    entries: t.field({ type: [EntryInputRef], required: true, description: 'The people.' }),
    note: t.string({ description: 'Why, for whoever reads the list later.' }),
  }),
});

type AddPayload = { added?: number; alreadyListed?: number; userErrors: UserError[] };
const AddPayloadRef = builder.objectRef<AddPayload>('AddToDoNotContactPayload').implement({
  description: 'What `addToDoNotContact` answers.',
  fields: (t) => ({
    added: t.int({ nullable: true, description: 'Entries new to the list.', resolve: (p) => p.added ?? null }),
    alreadyListed: t.int({
      nullable: true,
      description: 'Entries the list held already.',
      resolve: (p) => p.alreadyListed ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField(graphqlFieldOf(addAccountSuppressions), (t) =>
  t.field({
    type: AddPayloadRef,
    description:
      'Adds people to the account’s do-not-contact list: rows carrying any of them are dropped from every run, ' +
      'search and enrichment of the account from now on, unbilled. Anyone in the account may; VALIDATION_FAILED ' +
      'at `input.entries.<i>.value` for a value that is not one of its kind.',
    args: { input: t.arg({ type: AddInputRef, required: true, description: 'The people.' }) },
    resolve: (_, { input }, ctx) =>
      mutationPayload(
        async () =>
          (
            await callEndpoint(ctx.core, ctx.principal, addAccountSuppressions, input, {
              shape: (a: { added: number; alreadyListed: number }) => a,
            })
          ).body,
        ['input'],
      ),
  }),
);

type RemovePayload = { removedEntryId?: string; userErrors: UserError[] };
const RemovePayloadRef = builder.objectRef<RemovePayload>('RemoveFromDoNotContactPayload').implement({
  description: 'What `removeFromDoNotContact` answers.',
  fields: (t) => ({
    removedEntryId: t.id({
      nullable: true,
      description: 'The entry removed.',
      resolve: (p) => p.removedEntryId ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField(graphqlFieldOf(removeAccountSuppression), (t) =>
  t.field({
    type: RemovePayloadRef,
    description:
      'Takes an entry off the account’s list. Owners and admins (ROLE_REQUIRED otherwise); SUPPRESSION_KEPT for an ' +
      'entry the person made through the opt-out page.',
    args: { id: t.arg.id({ required: true, description: 'Its id (sup_…).' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        await callEndpoint(ctx.core, ctx.principal, removeAccountSuppression, String(args.id), {
          shape: () => undefined,
        });
        return { removedEntryId: String(args.id) };
      }, ['id']),
  }),
);
