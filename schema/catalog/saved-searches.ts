import {
  createSavedSearch,
  deleteSavedSearch,
  listSavedSearches,
  MAX_SAVED_SEARCHES,
  mayDeleteSavedSearch,
  type SavedSearchView,
} from '../../src/workflows/saved-searches.ts';
import { builder } from '../builder.ts';
import { AFTER_DESCRIPTION, connectionType, FIRST_DESCRIPTION } from '../connection.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from '../errors.ts';
import { MAX_PAGE, pageComplexity, pageOf } from '../identity/lists.ts';
import { NodeRef, registerNode } from '../node.ts';
import { LEAD_FILTER_FIELDS, LeadFilterInput, leadFilterParams } from '../leads.ts';

/*
 * Saved lead searches: a name and a LeadFilter kept for the whole account; src/workflows/saved-searches.ts
 * holds the rules (names, the cap, who deletes).
 */

type Saved = Record<string, unknown>;
/** A saved text, or a list the lead search reads from text (companyDomain's domains), as LeadFilter takes it. */
const text = (value: unknown) => (Array.isArray(value) ? value.join(', ') : typeof value === 'string' ? value : null);
const list = (value: unknown) => (Array.isArray(value) ? value.map(String) : null);

const SavedLeadFilterRef = builder.objectRef<Saved>('SavedLeadFilter').implement({
  description:
    'A saved search’s filter: LeadFilter’s fields as they were saved, checked and normalised (aliases such as ' +
    '"C-Suite" as their values); the fields set make a LeadFilter again. Unset fields are null.',
  fields: (t) =>
    Object.fromEntries(
      Object.entries(LEAD_FILTER_FIELDS).map(([name, [kind, description]]) => [
        name,
        kind === 'string'
          ? t.string({ nullable: true, description, resolve: (f) => text(f[name]) })
          : kind === 'strings'
            ? t.stringList({ nullable: true, description, resolve: (f) => list(f[name]) })
            : kind === 'boolean'
              ? t.boolean({ nullable: true, description, resolve: (f) => (f[name] === true ? true : null) })
              : kind === 'int'
                ? t.int({ nullable: true, description, resolve: (f) => (typeof f[name] === 'number' ? f[name] : null) })
                : t.field({
                    type: 'Money',
                    nullable: true,
                    description,
                    resolve: (f) => (typeof f[name] === 'number' ? f[name] : null),
                  }),
      ]),
    ),
});

const SavedSearchRef = builder.objectRef<SavedSearchView>('SavedSearch').implement({
  description: 'A lead search saved for the account: a name and a filter for `leadSearch` and `leads`.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'srch_…: its global id.' }),
    name: t.exposeString('name', { description: 'Its name, unique in the account.' }),
    filter: t.field({
      type: SavedLeadFilterRef,
      description: 'The filter, as it was saved: pass its fields set as `leadSearch(filter:)`.',
      resolve: (s) => s.filter as Saved,
    }),
    createdByName: t.exposeString('createdByName', {
      nullable: true,
      description: 'The name (or email) of the user who saved it; null when saved with an API key.',
    }),
    viewerMayDelete: t.boolean({
      description: 'Whether the caller may delete it: whoever saved it, and the account’s owners and admins.',
      resolve: (s, _, ctx) => mayDeleteSavedSearch(ctx.principal, s),
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was saved.', resolve: (s) => s.createdAt }),
  }),
});

registerNode('srch', 'SavedSearch', {
  keepsPrefix: true,
  localId: /^srch_[A-Za-z0-9]{16}$/,
  load: async (ids, ctx) => {
    const all = await listSavedSearches(ctx.core.db, ctx.principal.accountId);
    return ids.map((id) => all.find((s) => s.id === id) ?? null);
  },
});

const SavedSearchConnectionRef = connectionType<SavedSearchView>('SavedSearch', SavedSearchRef, {
  description: 'A page of the account’s saved lead searches, newest first.',
  totalCount: `How many saved searches the account keeps (at most ${MAX_SAVED_SEARCHES}).`,
});

builder.queryField('savedSearches', (t) =>
  t.field({
    type: SavedSearchConnectionRef,
    description: `The account’s saved lead searches, newest first (at most ${MAX_SAVED_SEARCHES}).`,
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_PAGE, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
    },
    complexity: pageComplexity,
    resolve: async (_, args, ctx) => pageOf(await listSavedSearches(ctx.core.db, ctx.principal.accountId), args),
  }),
);

const CreateSavedSearchInput = builder.inputType('CreateSavedSearchInput', {
  description: 'A lead search to save.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Its name: 1 to 100 characters, unique in the account.' }),
    filter: t.field({
      type: LeadFilterInput,
      required: true,
      description: 'The filter (at least one of its fields), checked as `leadSearch` checks it.',
    }),
  }),
});

type SavedSearchPayload = { savedSearch?: SavedSearchView; userErrors: UserError[] };
const CreateSavedSearchPayloadRef = builder.objectRef<SavedSearchPayload>('CreateSavedSearchPayload').implement({
  description: 'What `createSavedSearch` answers.',
  fields: (t) => ({
    savedSearch: t.field({
      type: SavedSearchRef,
      nullable: true,
      description: 'The saved search; null when refused.',
      resolve: (p) => p.savedSearch ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField('createSavedSearch', (t) =>
  t.field({
    type: CreateSavedSearchPayloadRef,
    description:
      'Saves a lead search for the account; any role may. User errors: VALIDATION_FAILED at `input.name` or ' +
      '`input.filter.<field>`, SAVED_SEARCH_EXISTS for a name the account uses, SAVED_SEARCH_LIMIT past ' +
      `${MAX_SAVED_SEARCHES} an account.`,
    args: { input: t.arg({ type: CreateSavedSearchInput, required: true, description: 'The search.' }) },
    resolve: (_, { input }, ctx) =>
      mutationPayload(
        async () => ({
          savedSearch: await createSavedSearch(ctx.core.db, ctx.principal, {
            name: input.name,
            filter: leadFilterParams(input.filter),
          }),
        }),
        ['input'],
      ),
  }),
);

type DeletedPayload = { deletedId?: string; userErrors: UserError[] };
const DeleteSavedSearchPayloadRef = builder.objectRef<DeletedPayload>('DeleteSavedSearchPayload').implement({
  description: 'What `deleteSavedSearch` answers.',
  fields: (t) => ({
    deletedId: t.id({
      nullable: true,
      description: 'The id of the saved search deleted; null when refused.',
      resolve: (p) => p.deletedId ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField('deleteSavedSearch', (t) =>
  t.field({
    type: DeleteSavedSearchPayloadRef,
    description:
      'Deletes a saved search: whoever saved it, or an owner or admin, may. User errors SAVED_SEARCH_NOT_FOUND ' +
      '(another account’s id too), ROLE_REQUIRED.',
    args: { id: t.arg.id({ required: true, description: 'Its id (srch_…).' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => ({
        deletedId: (await deleteSavedSearch(ctx.core.db, ctx.principal, String(args.id))).id,
      })),
  }),
);
