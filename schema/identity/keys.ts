import { KEY_REVOKED_REASONS, type KeyRevokedReason } from '../../db/tables/accounts.ts';
import { loadKeys, type ListedKey } from '../../src/accounts/keys.ts';
import { may } from '../../src/accounts/roles.ts';
import { builder } from '../builder.ts';
import { NodeRef, registerNode } from '../node.ts';
import { RoleEnum, UserRef, users } from './users.ts';

/**
 * An account's API keys as the console manages them: the `ApiKey` type and why a key was revoked.
 * Owners and admins signed in to the console list, create and revoke them (lists.ts, mutations.ts); an
 * API key asking is refused ROLE_REQUIRED.
 */

const REVOKED_REASON_TEXT: Record<KeyRevokedReason, string> = {
  revoked: 'Revoked by an owner or admin (revokeApiKey) or by the operator.',
  creator_removed: 'Its creator left the account or was removed from it: a key ends with its creator’s membership.',
};

const ApiKeyRevokedReasonEnum = builder.enumType('ApiKeyRevokedReason', {
  description: 'Why an API key was revoked.',
  values: Object.fromEntries(
    KEY_REVOKED_REASONS.map((reason) => [
      reason.toUpperCase(),
      { value: reason, description: REVOKED_REASON_TEXT[reason] },
    ]),
  ) as Record<Uppercase<KeyRevokedReason>, { value: KeyRevokedReason; description: string }>,
});

export const ApiKeyRef = builder.objectRef<ListedKey>('ApiKey').implement({
  description:
    'An API key of the account (`lg_live_…`). Only its prefix is kept readable; the whole key is shown once, by ' +
    'createApiKey. A key created in the console acts with at most its creator’s current role (`actsAs`) and is ' +
    'revoked when its creator leaves the account; keys the operator made (CLI, demo) have no creator and keep every ' +
    'key right. No key manages keys or members.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The key’s global id (`key_…`): what revokeApiKey takes.' }),
    name: t.exposeString('name', { description: 'What the account calls the key.' }),
    prefix: t.exposeString('prefix', {
      description: 'The key’s first characters (`lg_live_` and 6 more), to recognise it.',
    }),
    createdBy: t.field({
      type: UserRef,
      nullable: true,
      description:
        'Who created it in the console, whose current role bounds its rights; null for the operator’s keys (CLI, ' +
        'demo, an account’s first key).',
      resolve: (k, _, ctx) => (k.createdBy ? users(ctx).load(k.createdBy) : null),
    }),
    actsAs: t.field({
      type: RoleEnum,
      nullable: true,
      description:
        'The role whose rights the key has: its creator’s current role in the account, so it narrows when they ' +
        'are demoted (an ADMIN key manages webhooks but cannot read the ledger or buy credits). Null for an ' +
        'operator key (no creator: every key right, billing and webhooks included) and for a revoked key.',
      resolve: (k) => (k.revokedAt || !k.createdBy ? null : k.creatorRole),
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was created.', resolve: (k) => k.createdAt }),
    lastUsedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it last authenticated a request, at most a minute stale; null when never.',
      resolve: (k) => k.lastUsedAt,
    }),
    expiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it stops working; null when never.',
      resolve: (k) => k.expiresAt,
    }),
    revokedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it was revoked; null while it works.',
      resolve: (k) => k.revokedAt,
    }),
    revokedReason: t.field({
      type: ApiKeyRevokedReasonEnum,
      nullable: true,
      description: 'Why it was revoked; null while it works.',
      resolve: (k) => (k.revokedAt ? (k.revokedReason ?? 'revoked') : null),
    }),
  }),
});

registerNode('key', 'ApiKey', {
  keepsPrefix: true,
  localId: /^key_[A-Za-z0-9]{1,64}$/,
  load: (ids, ctx) =>
    may(ctx.principal, 'keys') ? loadKeys(ctx.core.db, ctx.principal, ids) : Promise.resolve(ids.map(() => null)),
});
