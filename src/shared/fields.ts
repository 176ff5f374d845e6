import { distance } from 'fastest-levenshtein';
import { z } from 'zod';
import { ValidationError, type ErrorDetail } from './errors.ts';

/**
 * The unknown-field rule of every face: a request naming a field its declaration does not know is
 * refused (400 `validation_failed`), each unknown field named with the closest known one, so a typo
 * (`maxCrawledPlacesPerSerch`) cannot silently run, and bill, the default. The known fields are read
 * from the zod schema that validates the request (a tool's input, an endpoint's request, a route's
 * parameters); objects declared loose (a row passed through, a record) take any field.
 */

/** The zod definition fields this module reads (zod 4's `_zod.def`). */
interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  element?: z.ZodType;
  getter?: () => z.ZodType;
}
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);

/** The schema with its wrappers (optional, default, a preprocess or a transform around it) taken off. */
function unwrap(schema: z.ZodType): Def {
  let def = defOf(schema);
  for (let depth = 0; depth < 20; depth++) {
    if (WRAPPERS.has(def.type) && def.innerType) def = defOf(def.innerType);
    else if (def.type === 'lazy' && def.getter) def = defOf(def.getter());
    else if (def.type === 'pipe' && def.in && def.out) {
      // A preprocess is a transform piped into the schema; a transform follows the schema it reads.
      const inner = defOf(def.in);
      def = inner.type === 'transform' ? defOf(def.out) : inner;
    } else break;
  }
  return def;
}

/** The field names an object schema declares (undefined when `schema` is not an object, or takes any field). */
export function knownFields(schema: z.ZodType): string[] | undefined {
  const def = unwrap(schema);
  if (def.type !== 'object' || !def.shape) return undefined;
  if (def.catchall && defOf(def.catchall).type !== 'never') return undefined;
  return Object.keys(def.shape);
}

/**
 * The known name closest to `name`, when it is close enough to be the one meant (a typo, another case, a swapped pair).
 */
export function closestField(name: string, known: readonly string[]): string | undefined {
  const folded = name.toLowerCase().replace(/[_-]/g, '');
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(folded, candidate.toLowerCase().replace(/[_-]/g, ''));
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 4)) ? best : undefined;
}

/**
 * "unknown field maxCrawledPlacesPerSerch; did you mean maxCrawledPlacesPerSearch?"
 * (`name` may be a path: `contacts.0.fistName`).
 */
export function unknownFieldMessage(name: string, known: readonly string[]): string {
  const closest = closestField(name.slice(name.lastIndexOf('.') + 1), known);
  return `unknown field ${name}${closest ? `; did you mean ${closest}?` : ''}`;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The fields of `value` that `schema` does not declare, at any depth of nested objects and arrays of
 * objects, one `{path, message}` each. `strip` names forms of a field name to read as the name
 * itself (a query string's `titles[]`).
 */
export function unknownFields(
  schema: z.ZodType,
  value: unknown,
  path: readonly string[] = [],
  strip?: RegExp,
): ErrorDetail[] {
  const def = unwrap(schema);
  const { element } = def;
  if (def.type === 'array' && element && Array.isArray(value)) {
    return value.flatMap((item, i) => unknownFields(element, item, [...path, String(i)]));
  }
  if (def.type !== 'object' || !def.shape || !isPlainObject(value)) return [];
  const shape = def.shape;
  const loose = def.catchall !== undefined && defOf(def.catchall).type !== 'never';
  const known = Object.keys(shape);
  const details: ErrorDetail[] = [];
  for (const [raw, field] of Object.entries(value)) {
    const name = strip ? raw.replace(strip, '') : raw;
    const fieldSchema = Object.hasOwn(shape, name) ? shape[name] : undefined;
    if (fieldSchema) details.push(...unknownFields(fieldSchema, field, [...path, name]));
    else if (!loose)
      details.push({ path: [...path, raw].join('.'), message: unknownFieldMessage([...path, raw].join('.'), known) });
  }
  return details;
}

/** The parameters of a route or call that takes none: any field is unknown. */
export const NO_FIELDS = z.object({}).strict();

/** Refuses `value` (400 `validation_failed`) when it names fields `schema` does not declare. */
export function assertKnownFields(schema: z.ZodType, value: unknown, strip?: RegExp): void {
  const details = unknownFields(schema, value, [], strip);
  if (details.length > 0) throw new ValidationError(details, details.map((d) => d.message).join('; '));
}
