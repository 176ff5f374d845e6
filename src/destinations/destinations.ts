/**
 * Destinations: a connection and what to do with rows (upsert HubSpot contacts or companies, post a
 * summary to a Slack channel), attached to a start (`destinations` on any tool's start, a pipeline, a
 * saved task). Each has a field mapping per tool: defaults come from the tool's columns (a column's
 * meaning, `fields.ts`), and the account may change or drop any of them.
 */
import { and, desc, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import type { Database, Executor } from '../../db/client.ts';
import { type Destination, destinationTable } from '../../db/tables/destinations.ts';
import type { Principal } from '../accounts/principal.ts';
import type { Core } from '../core.ts';
import { AppError, fromZodError, ValidationError } from '../shared/errors.ts';
import { randomBase62 } from '../shared/ids.ts';
import { assertStorable, unstorable } from '../shared/params.ts';
import { getTool, TOOLS } from '../tools/index.ts';
import type { Column } from '../tools/types.ts';
import { findConnection, providerName } from './connections.ts';
import { KIND_DEFAULTS, KIND_FIELDS, meaningOf } from './fields.ts';
import { checkSettings, type DeliverableKind, KIND_NAMES, KINDS, type Settings, settingsFields } from './targets.ts';

export const newDestinationId = () => `dest_${randomBase62(16)}`;

export { KINDS, type DeliverableKind };

const TOOL_NAMES = TOOLS.map((t) => t.name) as [string, ...string[]];

/** Per tool, the provider field of each column (null: not sent). */
const mappingSchema = z
  // Partial: a record keyed by an enum asks for every key in zod 4; a mapping names the tools it changes.
  .partialRecord(
    z.enum(TOOL_NAMES, { message: 'must be a tool name (maps, website-finder, …)' }),
    z.record(z.string(), z.string().max(100).nullable()),
  )
  .describe('Per tool: column → provider field (null: not sent); unset columns take the defaults.');

export const destinationInput = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters').describe('Its name.'),
    kind: z.enum(KIND_NAMES, { message: `must be one of ${KIND_NAMES.join(', ')}` }).describe('What to do with rows.'),
    connection: z.string().min(1).describe('The connection it uses (con_…).'),
    ...settingsFields,
    mapping: mappingSchema.optional(),
  })
  .strict();

const destinationNotFound = () => new AppError(404, 'destination_not_found', 'The account has no such destination.');

function parse<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  assertStorable(raw);
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) throw fromZodError(parsed.error);
  return parsed.data;
}

/** Checks a mapping against the tools' columns and the kind's fields. */
function checkMapping(kind: DeliverableKind, mapping: Partial<Record<string, Record<string, string | null>>>) {
  const fields = KIND_FIELDS[kind];
  const issues: { path: string; message: string }[] = [];
  for (const [tool, columns = {}] of Object.entries(mapping)) {
    const known = new Set(getTool(tool).columns.map((c) => c.key));
    for (const [column, field] of Object.entries(columns)) {
      if (!known.has(column))
        issues.push({ path: `mapping.${tool}.${column}`, message: `${tool} has no column ${column}` });
      else if (field === null) continue;
      else if (fields === 'apiName' && !/^[A-Za-z][A-Za-z0-9_]{0,79}$/.test(field))
        issues.push({ path: `mapping.${tool}.${column}`, message: 'must be a field’s API name, or null' });
      else if (fields === 'header' && !field.trim())
        issues.push({ path: `mapping.${tool}.${column}`, message: 'must be a column header, or null' });
      else if (Array.isArray(fields) && !fields.includes(field))
        issues.push({ path: `mapping.${tool}.${column}`, message: `must be one of ${fields.join(', ')}, or null` });
    }
  }
  if (issues.length > 0) throw new ValidationError(issues);
}

export async function createDestination(
  core: Pick<Core, 'db' | 'config' | 'clock' | 'events'>,
  principal: Principal,
  raw: unknown,
): Promise<Destination> {
  const input = parse(destinationInput, raw);
  const connection = await findConnection(core.db, principal.accountId, input.connection).catch(() => {
    throw new ValidationError([{ path: 'connection', message: 'the account has no such connection' }]);
  });
  const wanted = KINDS[input.kind].provider;
  if (connection.provider !== wanted)
    throw new ValidationError([
      {
        path: 'connection',
        message: `${input.kind} needs a ${providerName(wanted)} connection, not ${providerName(connection.provider)}`,
      },
    ]);
  checkMapping(input.kind, input.mapping ?? {});
  const { name, kind, connection: _connection, mapping, ...given } = input;
  const settings = await checkSettings(core, kind, connection, given);
  const [created] = await core.db
    .insert(destinationTable)
    .values({
      id: newDestinationId(),
      accountId: principal.accountId,
      name,
      kind,
      connectionId: connection.id,
      settings,
      mapping: mapping ?? {},
    })
    .returning();
  if (!created) throw new Error('the destination was not created');
  return created;
}

export async function findDestination(db: Executor, accountId: string, id: string): Promise<Destination> {
  if (unstorable(id)) throw destinationNotFound();
  const [found] = await db
    .select()
    .from(destinationTable)
    .where(and(eq(destinationTable.id, id), eq(destinationTable.accountId, accountId)));
  if (!found) throw destinationNotFound();
  return found;
}

export async function listDestinations(db: Database, accountId: string): Promise<Destination[]> {
  return db
    .select()
    .from(destinationTable)
    .where(eq(destinationTable.accountId, accountId))
    .orderBy(desc(destinationTable.createdAt), desc(destinationTable.id));
}

export async function deleteDestination(db: Database, accountId: string, id: string): Promise<void> {
  const found = await findDestination(db, accountId, id);
  await db.delete(destinationTable).where(eq(destinationTable.id, found.id));
}

/** Resumes a paused destination (its connection made again, or the reason settled). */
export async function resumeDestination(db: Database, accountId: string, id: string): Promise<Destination> {
  const found = await findDestination(db, accountId, id);
  const [resumed] = await db
    .update(destinationTable)
    .set({ pausedAt: null, pausedReason: null })
    .where(eq(destinationTable.id, found.id))
    .returning();
  return resumed ?? found;
}

/**
 * Destinations named on a start (`destinations: [id…]`): each the account's, checked in the start's
 * transaction; 400 at `destinations` for one it does not have.
 */
export async function assertDestinations(tx: Executor, accountId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const found = await tx
    .select({ id: destinationTable.id })
    .from(destinationTable)
    .where(and(eq(destinationTable.accountId, accountId), inArray(destinationTable.id, [...ids])));
  const missing = ids.filter((id) => !found.some((f) => f.id === id));
  if (missing.length > 0)
    throw new ValidationError([
      { path: 'destinations', message: `the account has no destination ${missing.join(', ')}` },
    ]);
}

/** What a start names as `destinations`: at most 5 ids, each once. */
export const destinationIds = z
  .array(z.string().min(1).max(64))
  .max(5, 'at most 5 destinations a start')
  .describe('Destinations (dest_…) its rows are delivered to when it ends.');

/**
 * The provider field of each column of `columns` for a destination: the destination's own mapping for
 * the tool, then the defaults (each column's meaning, the kind's field for it), each field once, the
 * first column that gives it winning. `keyOf` reads a column's own key (a pipeline's are prefixed).
 */
export function effectiveMapping(
  destination: Pick<Destination, 'kind' | 'mapping'>,
  columns: readonly { column: Column; tool: string; key: string }[],
): { key: string; field: string }[] {
  const own = destination.mapping as Record<string, Record<string, string | null>>;
  const defaults = KIND_DEFAULTS[destination.kind as DeliverableKind] ?? {};
  const everyColumn = KIND_FIELDS[destination.kind as DeliverableKind] === 'header';
  const taken = new Set<string>();
  const mapped: { key: string; field: string }[] = [];
  for (const { column, tool, key } of columns) {
    const chosen = own[tool]?.[column.key];
    const fallback = everyColumn ? column.header : defaults[meaningOf(column.key) ?? ''];
    const field = chosen === null ? undefined : (chosen ?? fallback);
    if (!field || taken.has(field)) continue;
    taken.add(field);
    mapped.push({ key, field });
  }
  return mapped;
}

/** A destination as the faces show it. */
export const destinationView = (d: Destination) => ({
  id: d.id,
  name: d.name,
  kind: d.kind,
  connectionId: d.connectionId,
  channel: ((d.settings as Settings).channel ?? null) as string | null,
  settings: d.settings as Settings,
  mapping: d.mapping as Record<string, Record<string, string | null>>,
  paused: d.pausedAt !== null,
  pausedReason: d.pausedReason,
  createdAt: d.createdAt.toISOString(),
});

/**
 * Any start may carry `destinations`: ids of the account's destinations its rows are delivered to when
 * it ends (src/destinations). Their form is checked here, that the account has them in the write.
 */
export function takeDestinations(raw: unknown): { body: unknown; destinations: string[] } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw) || !('destinations' in raw))
    return { body: raw, destinations: [] };
  const { destinations: value, ...body } = raw as Record<string, unknown>;
  if (value === undefined || value === null) return { body, destinations: [] };
  const parsed = destinationIds.safeParse(value);
  if (!parsed.success)
    throw new ValidationError(
      parsed.error.issues.map((i) => ({ path: ['destinations', ...i.path].join('.'), message: i.message })),
    );
  return { body, destinations: [...new Set(parsed.data)] };
}
