import { ValidationError } from '../src/shared/errors.ts';
import { builder } from './builder.ts';
import type { GraphQLContext } from './context.ts';

/**
 * Global object identification (the Relay spec, as GitHub's API has it): every object with an
 * identity implements `Node`, its `id` is unique across types, and `node(id:)`/`nodes(ids:)` refetch
 * it, within the caller's account like every other lookup.
 *
 * Ids are GitHub-style prefixed strings, opaque to callers: `<prefix>_<local id>`. Where the
 * service's own id already starts with its type's prefix (accounts `acc_…`, webhooks `wh_…`,
 * deliveries `msg_…`) the global id is that id; a run's id is its runId (17 letters and digits, no
 * underscore), as REST returns it.
 */

const NODE_TYPE = Symbol('node type');
type Tagged = { [NODE_TYPE]: string };

interface NodeKind {
  typename: string;
  /** The local id (without prefix) of a global id, or undefined when malformed. */
  local: (id: string) => string | undefined;
  load: (localIds: string[], ctx: GraphQLContext) => Promise<readonly (object | null)[]>;
}

const RUN_ID = /^[A-Za-z0-9]{17}$/;
const kinds = new Map<string, NodeKind>();
let runKind: NodeKind | undefined;

/**
 * Registers a Node type: `prefix` (or `run` for the runId), how a local id is checked (`local`), and
 * how the caller's objects are loaded by local id (null for another account's or none).
 */
export function registerNode(
  prefix: string,
  typename: string,
  options: { keepsPrefix?: boolean; localId?: RegExp; load: NodeKind['load'] },
) {
  const pattern = options.localId ?? /^\d{1,19}$/;
  const kind: NodeKind = {
    typename,
    local: (id) => {
      const local = options.keepsPrefix ? id : id.slice(prefix.length + 1);
      return pattern.test(local) ? local : undefined;
    },
    load: options.load,
  };
  if (prefix === 'run') runKind = kind;
  else kinds.set(prefix, kind);
}

/** The global id of a local id of a prefixed type. */
export const globalId = (prefix: string, localId: string | number | bigint) => `${prefix}_${localId}`;

function kindOf(id: string): { kind: NodeKind; local: string } | undefined {
  if (RUN_ID.test(id) && runKind) return { kind: runKind, local: id };
  const prefix = id.slice(0, Math.max(0, id.indexOf('_')));
  const kind = kinds.get(prefix);
  const local = kind?.local(id);
  return kind && local !== undefined ? { kind, local } : undefined;
}

/** The caller's objects of global ids, in order; null for a malformed id, another account's object or none. */
async function loadNodes(ids: readonly string[], ctx: GraphQLContext): Promise<(Tagged | null)[]> {
  const groups = new Map<NodeKind, { local: string; at: number }[]>();
  ids.forEach((id, at) => {
    const found = kindOf(id);
    if (!found) return;
    const group = groups.get(found.kind) ?? [];
    group.push({ local: found.local, at });
    groups.set(found.kind, group);
  });
  const result: (Tagged | null)[] = ids.map(() => null);
  await Promise.all(
    [...groups].map(async ([kind, wanted]) => {
      const loaded = await kind.load(
        wanted.map((w) => w.local),
        ctx,
      );
      wanted.forEach((w, i) => {
        const value = loaded[i];
        if (value) result[w.at] = { ...value, [NODE_TYPE]: kind.typename };
      });
    }),
  );
  return result;
}

export const NodeRef = builder.interfaceRef<object>('Node').implement({
  description:
    'An object with an id unique across every type, which `node(id:)` refetches. Treat ids as opaque strings.',
  resolveType: (value) => (value as Tagged)[NODE_TYPE],
  fields: (t) => ({
    id: t.id({ description: 'The object’s global id: unique across types, stable, opaque.', resolve: () => '' }),
  }),
});

export const MAX_NODES = 100;

builder.queryField('node', (t) =>
  t.field({
    type: NodeRef,
    nullable: true,
    description:
      'The object of a global id: null when there is none in the caller’s ' +
      'account (another account’s id is answered like an unknown one).',
    args: { id: t.arg.id({ required: true, description: 'A global id, as an object’s `id` field answers it.' }) },
    resolve: async (_, args, ctx) => (await loadNodes([String(args.id)], ctx))[0] ?? null,
  }),
);

builder.queryField('nodes', (t) =>
  t.field({
    type: [NodeRef],
    nullable: { list: false, items: true },
    description:
      `The objects of up to ${MAX_NODES} global ids, in the order given; ` +
      'null for each id with no object in the caller’s account.',
    args: { ids: t.arg.idList({ required: true, description: `Global ids, at most ${MAX_NODES}.` }) },
    complexity: (args) => ({ field: Math.max(1, args.ids.length), multiplier: 1 }),
    resolve: (_, args, ctx) => {
      if (args.ids.length > MAX_NODES)
        throw new ValidationError([{ path: 'ids', message: `at most ${MAX_NODES} ids` }]);
      return loadNodes(args.ids.map(String), ctx);
    },
  }),
);
