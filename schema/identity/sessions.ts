import type { ConsoleSession } from '../../db/tables/identity.ts';
import { listUserSessions } from '../../src/accounts/sessions.ts';
import { builder } from '../builder.ts';
import { NodeRef, registerNode } from '../node.ts';

/**
 * The browsers signed in to the console as the user: the `ConsoleSession` type. The user lists and
 * ends their own sessions only (lists.ts, mutations.ts).
 */

export const ConsoleSessionRef = builder.objectRef<ConsoleSession>('ConsoleSession').implement({
  description: 'A browser signed in to the console as the user.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The session’s global id (`ses_…`): what revokeSession takes.' }),
    createdAt: t.field({ type: 'DateTime', description: 'When the user signed in.', resolve: (s) => s.createdAt }),
    lastSeenAt: t.field({
      type: 'DateTime',
      description: 'When it was last used, at most a minute stale.',
      resolve: (s) => s.lastSeenAt,
    }),
    expiresAt: t.field({
      type: 'DateTime',
      description: 'When it ends unless used again (30 days after its last use, 90 after sign-in at most).',
      resolve: (s) => s.expiresAt,
    }),
    userAgent: t.exposeString('userAgent', { nullable: true, description: 'The browser’s User-Agent at sign-in.' }),
    ipAddress: t.string({
      nullable: true,
      description: 'The client address at sign-in (an IPv6 address as its /64).',
      resolve: (s) => s.ip,
    }),
    current: t.boolean({
      description: 'This is the session asking.',
      resolve: (s, _, ctx) => s.id === ctx.principal.sessionId,
    }),
  }),
});

registerNode('ses', 'ConsoleSession', {
  keepsPrefix: true,
  localId: /^ses_[A-Za-z0-9]{1,64}$/,
  load: async (ids, ctx) => {
    if (!ctx.principal.userId) return ids.map(() => null);
    const own = await listUserSessions(ctx.core.db, ctx.principal.userId, ctx.core.clock());
    return ids.map((id) => own.find((s) => s.id === id) ?? null);
  },
});
