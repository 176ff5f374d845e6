/**
 * Shared parts of the fuzz suites (test/fuzz.*.test.ts): generators of hostile input (fast-check),
 * the cases of each face built from what the service declares (the OpenAPI document, the GraphQL
 * schema, the MCP tool list), the checks every answer must pass, and the lanes the cases run in.
 *
 * A lane is an account of its own (real key, scale plan, an empty wallet so nothing is charged by
 * accident) with a finished run and a webhook whose ids the generators mix in. Only one case runs in
 * a lane at a time, so comparing the account's writes before and after a case is exact: a refused
 * request must leave them as they were.
 *
 * Run directly, this file runs the fuzz suites with more cases:
 * `npm run fuzz -- --cases 2000 [--seed 42] [--face rest|graphql|mcp]`.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isUnionType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';
import { newRunId } from '../../src/shared/ids.ts';
import type { TestApp } from './app.ts';

// ---------------------------------------------------------------------------------------------
// Settings

/** Cases per route: 25 in `npm test`, 5 in `npm run test:fast`, 1000 in `npm run fuzz` (or `--cases N`). */
export const FUZZ_CASES = Math.max(1, Number(process.env.FUZZ_CASES ?? 25));
/** The seed of every property (printed, so a failure can be replayed with FUZZ_SEED). */
export const FUZZ_SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
/** Routes fuzzed at once in a suite, each in a lane (an account) of its own. */
export const FUZZ_LANES = 5;
/** Print how each route answered (always in `npm run fuzz`; in `npm test` with FUZZ_VERBOSE=1). */
export const FUZZ_VERBOSE = process.env.FUZZ_VERBOSE === '1';
/** Time one route's cases may take. */
export const routeTimeout = (cases = FUZZ_CASES) => 60_000 + cases * 1_000;

// ---------------------------------------------------------------------------------------------
// Hostile values

const b64 = (text: string) => Buffer.from(text).toString('base64url');

/** Text Postgres cannot hold, alone or inside other text. */
export const UNSTORABLE = [
  '\u0000',
  'a\u0000b',
  '\u0000\u0000\u0000',
  '\ud800',
  'x\udfff',
  '\udc00\ud800',
  'end\ud83d',
];

/** Strings that have broken parsers somewhere: numbers out of range, dates out of range, injections, odd Unicode. */
const SPECIAL_STRINGS = [
  '',
  ' ',
  '\t\r\n',
  'null',
  'undefined',
  'true',
  'false',
  '0',
  '-0',
  '-1',
  '1.5',
  '1e400',
  '-1e400',
  'NaN',
  'Infinity',
  '0x10',
  '1_000',
  '99999999999999999999999',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775809',
  '2147483647',
  '2147483648',
  '4294967296',
  '-271821-04-20T00:00:00.000Z',
  '+275760-09-13T00:00:00.000Z',
  '0000-01-01T00:00:00.000Z',
  '2024-02-30',
  '1970-01-01T00:00:00.000Z',
  "'; drop table run; --",
  '" OR 1=1 --',
  '\\',
  '%',
  '%%',
  '%00',
  '%zz',
  '%E0%A4',
  '%ED%A0%80',
  '../../etc/passwd',
  '?&=#',
  '[]',
  '{}',
  '{"a":1}',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, sent as this literal text
  '${7*7}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  '<a href="x">',
  'http://127.0.0.1:1/',
  'http://169.254.169.254/latest/meta-data',
  'https://[::1]/',
  'ftp://x/',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'mailto:a@b',
  'https://www.google.com/maps/search/dentist/@39.7,-104.9,12z',
  'https://www.google.com/maps/@999,999,99z',
  'https://app.apollo.io/#/people?personTitles[]=ceo&page=99999999999',
  'dentist',
  'Denver, CO',
  'acme.com',
  'jane.doe@acme.com',
  'a@b',
  '@',
  'a@@b.com',
  '80202',
  '+1 303-555-0100',
  'Ω≈ç√∫˜µ≤',
  '𝕳𝖊𝖑𝖑𝖔',
  '🙂🙃',
  '\u202eevil',
  '\ufeffbom',
  '\uffff',
  '\ufffe',
  '\u0085',
  'e\u0301',
  'ﷺ',
  'İ',
  'ß',
  '\u{10ffff}',
  b64('row:99999999999'),
  b64('row:-1'),
  b64('row:\u0000'),
  b64('\ud800'),
  b64('null'),
  b64('[]'),
  b64(JSON.stringify({ createdAt: '-271821-04-20T00:00:00.000Z', id: 'x' })),
  b64(JSON.stringify({ createdAt: '2020-01-01T00:00:00.000Z', id: '\u0000' })),
  b64(JSON.stringify({ createdAt: 1, id: 2 })),
  b64('+275760-09-13T00:00:00.000Z|msg_x'),
  b64('2020-01-01T00:00:00.000Z|\u0000'),
  b64('-271821-04-20T00:00:00.000Z|msg_x|x'),
];

/** Any text, biased to the hostile: unstorable characters, specials, long runs, random Unicode. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...SPECIAL_STRINGS), weight: 4 },
  { arbitrary: fc.constantFrom(...UNSTORABLE), weight: 2 },
  {
    arbitrary: fc
      .tuple(fc.string({ maxLength: 12 }), fc.constantFrom(...UNSTORABLE), fc.string({ maxLength: 12 }))
      .map(([a, b, c]) => a + b + c),
    weight: 2,
  },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }), weight: 1 },
  { arbitrary: fc.string({ maxLength: 20 }), weight: 2 },
  {
    arbitrary: fc
      .tuple(fc.integer({ min: 250, max: 20_000 }), fc.constantFrom('x', 'é', '🙂', ' ', ','))
      .map(([n, c]) => c.repeat(n)),
    weight: 1,
  },
);

/** Numbers at and past every boundary the service has (plan prices, page sizes, 32- and 64-bit limits). */
const BOUNDARY_NUMBERS = [
  0,
  -0,
  1,
  -1,
  2,
  0.5,
  -0.5,
  0.001,
  1e-7,
  5e-324,
  5,
  10,
  20,
  49,
  50,
  60,
  99,
  100,
  101,
  148.999,
  149,
  500,
  649,
  1000,
  1001,
  10_000,
  10_001,
  50_000,
  100_000,
  100_001,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31),
  -(2 ** 31) - 1,
  2 ** 32,
  2 ** 53 - 1,
  2 ** 53,
  2 ** 53 + 2,
  2 ** 63,
  2 ** 64,
  1e15,
  1e16,
  1e21,
  1e300,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  // An integer far past 64 bits, as a number holds it: 99999999999999999999999 typed in is this double.
  1e23,
  -1e23,
  4294967296,
];

export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  { arbitrary: fc.constantFrom(...BOUNDARY_NUMBERS), weight: 4 },
  { arbitrary: fc.integer(), weight: 2 },
  { arbitrary: fc.integer({ min: -5, max: 200 }), weight: 2 },
  { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 1 },
);

/** Names of object fields, with the ones that have broken JSON handling elsewhere. */
const hostileKey: fc.Arbitrary<string> = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      '__proto__',
      'constructor',
      'prototype',
      '',
      ' ',
      'a\u0000',
      '\ud800',
      'webhookUrl',
      'limit',
      'offset',
      'after',
      'x'.repeat(1000),
      'a.b',
      '0',
    ),
    weight: 1,
  },
  { arbitrary: fc.string({ maxLength: 12 }), weight: 3 },
);

const leaf: fc.Arbitrary<unknown> = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null));

/** Any JSON value: leaves, lists and objects nested a few levels. */
export const anyJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { arbitrary: leaf, weight: 4 },
    { arbitrary: fc.array(tie('value'), { maxLength: 4 }), weight: 1 },
    { arbitrary: fc.dictionary(hostileKey, tie('value'), { maxKeys: 4 }), weight: 1 },
  ),
})).value;

/** A value nested `depth` levels deep (a list in a list …, or an object in an object …). */
const deeplyNested: fc.Arbitrary<unknown> = fc
  .tuple(fc.integer({ min: 20, max: 3_000 }), fc.boolean())
  .map(([depth, list]) => {
    let value: unknown = 1;
    for (let i = 0; i < depth; i++) value = list ? [value] : { a: value };
    return value;
  });

/** Raw body texts that are not what their Content-Type says, or JSON at its edges. */
export const RAW_BODIES = [
  '',
  '{',
  '[',
  ']',
  'null',
  '0',
  '"x"',
  'true',
  '{"a":1e999}',
  '{"limit":-1e999}',
  '{"a":-0}',
  '{"a":1,"a":2}',
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '\ufeff{}',
  '{}\u0000',
  '\u0000',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '{"a":123456789012345678901234567890}',
  '['.repeat(10_000) + ']'.repeat(10_000),
  `${'{"a":'.repeat(2_000)}1${'}'.repeat(2_000)}`,
  'a=1&b=2',
  '<xml/>',
  `{"a":"${'x'.repeat(200_000)}"}`,
];

// ---------------------------------------------------------------------------------------------
// Values from JSON Schema (OpenAPI request bodies and parameters, MCP tool input schemas)

/** The keywords of a JSON Schema the fuzzer reads; a schema may hold others. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  items?: JsonSchema;
  maxItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  examples?: unknown[];
}

/** The parts of an OpenAPI operation the fuzzer reads. */
interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema; example?: unknown }> };
  security?: unknown[];
  responses?: Record<string, { $ref?: string; description?: string }>;
}

interface OpenApiParameter {
  $ref?: string;
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: JsonSchema;
}

/** A JSON object (or array): what a parsed answer must be for its fields to be read. */
const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object';

/** Plausible text that may pass a field's own checks, so the next checks are reached too. */
const plausibleString = (schema: JsonSchema): fc.Arbitrary<string> => {
  const min = Math.min(schema.minLength ?? 0, 40);
  const max = Math.max(min, Math.min(schema.maxLength ?? 40, 40));
  return fc.oneof(
    fc.string({ minLength: min, maxLength: max }),
    fc.constantFrom(
      'dentist',
      'Denver, CO',
      'Colorado',
      'CO',
      '80202',
      'acme.com',
      'jane.doe@acme.com',
      'plumbing',
      'shopify',
      'ceo',
      'Jane Doe',
      '1234 Main St, Denver, CO 80202',
    ),
  );
};

/** Numbers in range, at its edges, just past them, and anywhere. */
const numberFor = (schema: JsonSchema, integer: boolean): fc.Arbitrary<number> => {
  const min = typeof schema.minimum === 'number' ? schema.minimum : -1e6;
  const max = typeof schema.maximum === 'number' ? schema.maximum : 1e6;
  const edges = [min, max, min - 1, max + 1, min - 0.5, max + 0.5].filter(Number.isFinite);
  return fc.oneof(
    {
      arbitrary: integer
        ? fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31 - 1) })
        : fc.double({ min, max, noNaN: true }),
      weight: 2,
    },
    { arbitrary: fc.constantFrom(...edges), weight: 2 },
    { arbitrary: hostileNumber, weight: 2 },
  );
};

interface SchemaContext {
  /** The document `$ref`s point into. */
  root?: object;
  /** Ids of the lane's objects, mixed into strings. */
  ids: readonly string[];
}

/** `node`, or what its `$ref` points to in `root` (an empty one when nothing is there). */
function resolve<T extends { $ref?: string }>(node: T, root?: object): T {
  if (typeof node.$ref !== 'string' || !root) return node;
  let target: unknown = root;
  for (const part of node.$ref.replace(/^#\//, '').split('/')) target = isRecord(target) ? target[part] : undefined;
  // The document's own $refs point to what `node` is (a schema, a parameter).
  return target ? resolve(target as T, root) : ({} as T);
}

/**
 * Values for `schema`: mostly of its type with hostile content (so the checks of each field are
 * reached), sometimes any JSON at all (the wrong type), objects with fields missing and extra.
 */
export function fromSchema(schema: JsonSchema, ctx: SchemaContext, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema, ctx.root);
  if (depth > 4) return leaf;
  const options = s.anyOf ?? s.oneOf ?? s.allOf;
  if (options?.length) return fc.oneof(...options.map((o) => fromSchema(o, ctx, depth + 1)));
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  let typed: fc.Arbitrary<unknown>;
  if (Array.isArray(s.enum)) {
    typed = fc.oneof({ arbitrary: fc.constantFrom(...s.enum), weight: 2 }, { arbitrary: hostileString, weight: 1 });
  } else if (type === 'string') {
    typed = fc.oneof(
      { arbitrary: hostileString, weight: 3 },
      { arbitrary: plausibleString(s), weight: 2 },
      ...(ctx.ids.length ? [{ arbitrary: fc.constantFrom(...ctx.ids), weight: 1 }] : []),
    );
  } else if (type === 'integer' || type === 'number') {
    typed = numberFor(s, type === 'integer');
  } else if (type === 'boolean') {
    typed = fc.boolean();
  } else if (type === 'array') {
    const item = fromSchema(s.items ?? {}, ctx, depth + 1);
    const arrays: fc.WeightedArbitrary<unknown>[] = [{ arbitrary: fc.array(item, { maxLength: 5 }), weight: 6 }];
    // One item past the most allowed (cheap items only: a list of 10,001 short strings is ~100 KB).
    if (typeof s.maxItems === 'number' && s.maxItems <= 20_000)
      arbitraryPush(arrays, fc.constant(Array.from({ length: s.maxItems + 1 }, (_, i) => `x${i}`)), 1);
    typed = fc.oneof(...arrays);
  } else if (type === 'object' || s.properties) {
    typed = objectFrom(s, ctx, depth);
  } else {
    typed = anyJson;
  }
  return fc.oneof({ arbitrary: typed, weight: 6 }, { arbitrary: anyJson, weight: 1 });
}

function arbitraryPush(list: fc.WeightedArbitrary<unknown>[], arbitrary: fc.Arbitrary<unknown>, weight: number) {
  list.push({ arbitrary, weight });
}

/** An object of `schema`'s fields: each required one usually present, each optional one sometimes, plus a stray field now and then. */
function objectFrom(schema: JsonSchema, ctx: SchemaContext, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const required = new Set<string>(schema.required ?? []);
  const fields = Object.entries(schema.properties ?? {}).map(([name, prop]) =>
    fc.option(
      fromSchema(prop, ctx, depth + 1).map((value) => [name, value] as const),
      { nil: undefined, freq: required.has(name) ? 8 : 2 },
    ),
  );
  const extra = fc.option(fc.tuple(hostileKey, anyJson), { nil: undefined, freq: 6 });
  const additional =
    schema.additionalProperties && typeof schema.additionalProperties === 'object'
      ? fc.dictionary(hostileKey, anyJson, { maxKeys: 3 })
      : fc.constant({});
  return fc.tuple(fc.tuple(...fields), extra, additional).map(([present, stray, more]) => {
    const out: Record<string, unknown> = { ...more };
    for (const entry of present) if (entry) defineField(out, entry[0], entry[1]);
    if (stray) defineField(out, stray[0], stray[1]);
    return out;
  });
}

/** Sets a field even when it is named `__proto__` (JSON.stringify then writes it as a field). */
function defineField(target: Record<string, unknown>, key: string, value: unknown) {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Paths to every value inside `value` (the root is the empty path). */
function pathsOf(value: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(at);
  if (Array.isArray(value)) for (const [i, v] of value.entries()) pathsOf(v, [...at, i], out);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) pathsOf(v, [...at, k], out);
  return out;
}

/** An object or array of a parsed example, indexed by a path's parts. */
type Fields = Record<string | number, unknown>;

/**
 * A working example with one thing changed: a value replaced (by a hostile one), a field removed,
 * or a field added. Everything else stays valid, so the change meets the deepest checks.
 */
export function mutatedExample(example: unknown): fc.Arbitrary<unknown> {
  const paths = pathsOf(example);
  return fc
    .tuple(fc.constantFrom(...paths), fc.constantFrom('replace', 'replace', 'remove', 'add'), anyJson, hostileKey)
    .map(([path, op, value, key]) => {
      const copy = structuredClone(example);
      if (path.length === 0) return op === 'replace' ? value : copy;
      // pathsOf goes down into arrays and objects only, so a path's parent is one of them.
      const parent = path.slice(0, -1).reduce<unknown>((node, part) => (node as Fields)[part], copy) as
        | Fields
        | unknown[];
      const last = path.at(-1)!;
      if (op === 'replace') (parent as Fields)[last] = value;
      else if (op === 'remove') Array.isArray(parent) ? parent.splice(Number(last), 1) : delete parent[last];
      else if (parent && typeof parent === 'object' && !Array.isArray(parent)) defineField(parent, key, value);
      else if (Array.isArray(parent)) parent.push(value);
      return copy;
    });
}

/**
 * `value` with fields named `__proto__` renamed: fast-check likes that name, and a body carrying it is
 * refused whole by the JSON parser (proto poisoning), so most cases go without it to reach further.
 */
function withoutProtoKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutProtoKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) defineField(out, k === '__proto__' ? '__proto' : k, withoutProtoKeys(v));
  return out;
}

/** Mostly without `__proto__` fields (see withoutProtoKeys), sometimes with. */
export const mostlyWithoutProtoKeys = <T>(values: fc.Arbitrary<T>): fc.Arbitrary<T> =>
  fc
    .tuple(values, fc.integer({ min: 0, max: 9 }))
    .map(([value, dice]) => (dice === 0 ? value : (withoutProtoKeys(value) as T)));

/** Inputs of a route or tool: from its schema, its example with one change, or anything. */
export function inputFrom(schema: JsonSchema | undefined, example: unknown, ctx: SchemaContext): fc.Arbitrary<unknown> {
  const options: fc.WeightedArbitrary<unknown>[] = [{ arbitrary: anyJson, weight: 1 }];
  if (schema) options.push({ arbitrary: fromSchema(schema, ctx), weight: 6 });
  if (example !== undefined)
    options.push({ arbitrary: mutatedExample(example), weight: 6 }, { arbitrary: fc.constant(example), weight: 1 });
  return fc.oneof(
    { arbitrary: mostlyWithoutProtoKeys(fc.oneof(...options)), weight: 14 },
    { arbitrary: deeplyNested, weight: 1 },
  );
}

// ---------------------------------------------------------------------------------------------
// REST

/** Percent-encodes any text, lone surrogates included (as the bytes UTF-8 would give them, which are not UTF-8). */
export function encodeLoose(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff)
      out +=
        `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`.toUpperCase();
    else out += encodeURIComponent(ch);
  }
  return out;
}

/** Raw bits of paths and query strings that no encoder would write. */
const RAW_URL_PARTS = [
  '%',
  '%%',
  '%zz',
  '%E0%A4',
  '%ED%A0%80',
  '%FF',
  '%00',
  '%C0%AE%C0%AE',
  '..',
  '.',
  '%2e%2e%2f',
  ';',
  ',',
  '~',
  '*',
  '%20',
  '+',
];

export interface RestRoute {
  method: 'GET' | 'POST' | 'DELETE';
  /** As OpenAPI writes it: `/api/downloads/{runId}`. */
  path: string;
  params: { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema: JsonSchema }[];
  body?: { schema: JsonSchema; example?: unknown };
  public: boolean;
  /**
   * The codes the route documents for each 5xx status (its responses' descriptions name them): the
   * deployment's state, such as `secrets_not_configured` on a server whose operator set no SECRETS_KEYS.
   */
  serverErrors: Record<number, readonly string[]>;
}

/** Every operation of an OpenAPI document. */
export function restRoutesOf(doc: { paths: Record<string, Record<string, unknown>> }): RestRoute[] {
  const routes: RestRoute[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const op = operation as OpenApiOperation;
      const params = (op.parameters ?? [])
        .map((p) => resolve(p, doc))
        .map((p) => ({ name: p.name, in: p.in, required: p.required, schema: p.schema ?? {} }));
      const json = op.requestBody?.content?.['application/json'];
      routes.push({
        method: method.toUpperCase() as RestRoute['method'],
        path,
        params,
        // The request's example, or the first of its schema's examples.
        body: json
          ? { schema: json.schema ?? {}, example: json.example ?? resolve(json.schema ?? {}, doc).examples?.[0] }
          : undefined,
        public: Array.isArray(op.security) && op.security.length === 0,
        serverErrors: Object.fromEntries(
          Object.entries(op.responses ?? {})
            .filter(([status]) => Number(status) >= 500)
            .map(([status, response]) => [
              Number(status),
              [...(resolve(response, doc).description ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1] as string),
            ]),
        ),
      });
    }
  }
  return routes;
}

export interface RestCase {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** A query value as text (lists as repeated names or joined, objects as JSON). */
const queryPairs = (name: string, value: unknown, repeat: boolean): [string, string][] => {
  if (value === undefined) return [];
  if (Array.isArray(value) && repeat)
    return value.map((v) => [name, typeof v === 'string' ? v : (JSON.stringify(v) ?? '')]);
  if (typeof value === 'string') return [[name, value]];
  return [[name, typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? '')]];
};

/**
 * Requests to `route`: its path parameters as the lane's ids or anything, its query parameters as
 * their schemas say or not, unknown ones, raw encodings, a body from its schema or example (or not
 * JSON at all), sometimes another Content-Type and an Idempotency-Key.
 */
export function restCase(
  route: RestRoute,
  ctx: SchemaContext & { idsByParam: Record<string, readonly string[]> },
): fc.Arbitrary<RestCase> {
  const pathParams = route.params.filter((p) => p.in === 'path');
  const queryParams = route.params.filter((p) => p.in === 'query');
  const pathValue = (name: string) =>
    fc.oneof(
      { arbitrary: fc.constantFrom(...(ctx.idsByParam[name] ?? ['x'])).map(encodeURIComponent), weight: 3 },
      { arbitrary: hostileString.filter((s) => s.length > 0 && s.length < 4_000).map(encodeLoose), weight: 3 },
      { arbitrary: fc.constantFrom(...RAW_URL_PARTS), weight: 1 },
    );
  const path = fc
    .tuple(...pathParams.map((p) => pathValue(p.name).map((v) => [p.name, v] as const)))
    .map((pairs) => pairs.reduce((p, [name, value]) => p.replace(`{${name}}`, value), route.path));
  // A few of the route's parameters at a time: with all thirty of a search, one of them is always wrong.
  const someParams = fc
    .subarray(queryParams, { maxLength: Math.min(5, queryParams.length) })
    .chain((chosen) =>
      fc.tuple(
        ...chosen.map((p) => fc.tuple(fromSchema(p.schema, ctx), fc.boolean()).map((v) => [p.name, v] as const)),
      ),
    );
  const query = fc
    .tuple(
      someParams,
      fc.option(fc.tuple(hostileKey, hostileString), { nil: undefined, freq: 12 }),
      fc.option(
        fc.constantFrom(
          ...RAW_URL_PARTS,
          'a[b]=1',
          '&&&',
          '=',
          'format=json&format=csv',
          `${queryParams[0]?.name ?? 'x'}[]=%00`,
        ),
        { nil: undefined, freq: 12 },
      ),
    )
    .map(([values, stray, raw]) => {
      const pairs = values.flatMap(([name, v]) => queryPairs(name, v[0], v[1]));
      if (stray) pairs.push(stray);
      const parts = pairs.map(([k, v]) => `${encodeLoose(k)}=${encodeLoose(v)}`);
      if (raw) parts.push(raw);
      return parts.join('&');
    });
  const json = (value: unknown) => ({ text: JSON.stringify(value) ?? 'null', type: 'application/json' });
  const bodies: fc.WeightedArbitrary<{ text: string; type?: string } | undefined>[] = [];
  if (route.method !== 'GET') {
    if (route.body)
      bodies.push({ arbitrary: inputFrom(route.body.schema, route.body.example, ctx).map(json), weight: 12 });
    else bodies.push({ arbitrary: fc.constant(undefined), weight: 4 }, { arbitrary: anyJson.map(json), weight: 1 });
    bodies.push(
      { arbitrary: fc.constantFrom(...RAW_BODIES).map((text) => ({ text, type: 'application/json' })), weight: 2 },
      {
        arbitrary: fc
          .tuple(
            fc.constantFrom(...RAW_BODIES, '{}'),
            fc.constantFrom(
              'text/plain',
              'application/x-www-form-urlencoded',
              'multipart/form-data; boundary=x',
              'application/json; charset=utf-16',
              'application/xml',
              '',
            ),
          )
          .map(([text, type]) => ({ text, type })),
        weight: 1,
      },
    );
  } else {
    bodies.push({ arbitrary: fc.constant(undefined), weight: 1 });
  }
  const idempotencyKey = fc.option(
    fc.oneof(
      fc
        .string({ unit: 'binary-ascii', minLength: 1, maxLength: 300 })
        .filter((k) => /^[\x20-\x7e]+$/.test(k) && k.trim() === k),
      fc.constantFrom('k', 'x'.repeat(255), 'x'.repeat(256)),
    ),
    { nil: undefined, freq: 8 },
  );
  return fc.tuple(path, query, fc.oneof(...bodies), idempotencyKey).map(([p, q, body, key]) => {
    const headers: Record<string, string> = {};
    if (body?.type) headers['content-type'] = body.type;
    if (key !== undefined) headers['idempotency-key'] = key;
    return { method: route.method, url: q ? `${p}?${q}` : p, headers, body: body?.text };
  });
}

/** Why a REST answer breaks the rules (a 5xx, a 4xx without the error body, JSON that does not parse), or undefined. */
export function restViolation(
  status: number,
  contentType: string,
  text: string,
  serverErrors: RestRoute['serverErrors'] = {},
): string | undefined {
  if (status >= 500) {
    // A 5xx the route documents (the deployment's state, not the request's) is its contract; any other fails.
    let code: unknown;
    try {
      code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
    } catch {
      code = undefined;
    }
    const documented = typeof code === 'string' && code !== 'internal_error' && serverErrors[status]?.includes(code);
    if (!documented) return `answered ${status}: ${text.slice(0, 300)}`;
  }
  if (status >= 400) {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return `${status} without a JSON error body: ${text.slice(0, 300)}`;
    }
    return errorBodyViolation(body, `${status}`);
  }
  if (contentType.includes('json') && text !== '') {
    try {
      if (contentType.includes('ndjson')) for (const line of text.split('\n').filter(Boolean)) JSON.parse(line);
      else JSON.parse(text);
    } catch {
      return `${status} with JSON that does not parse: ${text.slice(0, 300)}`;
    }
  }
  return undefined;
}

/** Why `body` is not the REST error body `{error: {code, message, details?}}` (also MCP's tool errors), or undefined. */
export function errorBodyViolation(body: unknown, what: string): string | undefined {
  const error = isRecord(body) ? body.error : undefined;
  if (!isRecord(error) || typeof error.code !== 'string' || error.code === '' || typeof error.message !== 'string')
    return `${what} without the error body: ${JSON.stringify(body).slice(0, 300)}`;
  if (error.code === 'internal_error') return `${what} internal_error: ${JSON.stringify(body).slice(0, 300)}`;
  if (error.code === 'validation_failed') {
    const details = error.details;
    if (
      !Array.isArray(details) ||
      details.length === 0 ||
      !details.every((d) => isRecord(d) && typeof d.path === 'string' && typeof d.message === 'string')
    ) {
      return `${what} validation_failed without [{path, message}] details: ${JSON.stringify(body).slice(0, 300)}`;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// MCP

export interface McpToolInfo {
  name: string;
  inputSchema: JsonSchema;
  example?: unknown;
}

/** JSON-RPC messages to /mcp calling `tool`: arguments from its schema or example, arguments that are no object, broken envelopes, batches. */
export function mcpCase(tool: McpToolInfo, ctx: SchemaContext): fc.Arbitrary<unknown> {
  const call = (args: unknown, id: unknown = 1) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: tool.name, arguments: args },
  });
  return fc.oneof(
    {
      arbitrary: inputFrom(tool.inputSchema, tool.example ?? tool.inputSchema.examples?.[0], ctx).map((args) =>
        call(args),
      ),
      weight: 14,
    },
    {
      arbitrary: fc
        .oneof(fc.array(anyJson, { maxLength: 3 }), hostileString, hostileNumber, fc.constant(null))
        .map((args) => call(args)),
      weight: 1,
    },
    { arbitrary: fc.tuple(anyJson, fromSchema(tool.inputSchema, ctx)).map(([id, args]) => call(args, id)), weight: 1 },
    {
      arbitrary: fc.constantFrom(
        { jsonrpc: '2.0', id: 1, method: 'tools/call' },
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { arguments: {} } },
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 7, arguments: {} } },
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: `${tool.name}\u0000`, arguments: {} } },
        { jsonrpc: '1.0', id: 1, method: 'tools/call', params: { name: tool.name, arguments: {} } },
        { id: 1, method: 'tools/call', params: { name: tool.name, arguments: {} } },
        { jsonrpc: '2.0', method: 'tools/call', params: { name: tool.name, arguments: {} } },
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: tool.name, arguments: {}, _meta: { progressToken: { a: [1] } } },
        },
        [],
        [call({}, 1), call({ x: '\u0000' }, 2)],
      ),
      weight: 1,
    },
  );
}

/** Why an MCP answer breaks the rules, or undefined; and whether it refused (a JSON-RPC error or a tool error). */
export function mcpVerdict(status: number, text: string): { violation?: string; refused: boolean } {
  if (status >= 500) return { violation: `answered ${status}: ${text.slice(0, 300)}`, refused: true };
  if (status === 202 && text === '') return { refused: false };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { violation: `${status} that is not JSON: ${text.slice(0, 300)}`, refused: true };
  }
  if (status >= 400) {
    // The transport refuses a message with a JSON-RPC error; the gateway's own refusals carry the REST body.
    const rpcError = isRecord(body) && body.jsonrpc === '2.0' && isRecord(body.error) ? body.error : undefined;
    if (typeof rpcError?.code === 'number' && typeof rpcError.message === 'string') {
      return {
        violation: rpcError.code === -32603 ? `${status} JSON-RPC internal error: ${text.slice(0, 300)}` : undefined,
        refused: true,
      };
    }
    return { violation: errorBodyViolation(body, `${status}`), refused: true };
  }
  // A batch wrote nothing only when every call in it was refused.
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  let refusedAll = true;
  for (const message of messages) {
    if (!isRecord(message) || message.jsonrpc !== '2.0')
      return { violation: `not a JSON-RPC answer: ${text.slice(0, 300)}`, refused: true };
    if (message.error) {
      if (
        !isRecord(message.error) ||
        typeof message.error.code !== 'number' ||
        typeof message.error.message !== 'string'
      )
        return { violation: `malformed JSON-RPC error: ${text.slice(0, 300)}`, refused: true };
      if (message.error.code === -32603)
        return { violation: `JSON-RPC internal error: ${text.slice(0, 300)}`, refused: true };
    } else if (isRecord(message.result) && message.result.isError) {
      // A tool error carries its body as text only: structured content is for answers.
      const [first] = Array.isArray(message.result.content) ? message.result.content : [];
      const errorText = isRecord(first) && typeof first.text === 'string' ? first.text : '';
      let errorJson: unknown;
      try {
        errorJson = JSON.parse(errorText);
      } catch {
        return { violation: `a tool error whose text is not JSON: ${text.slice(0, 300)}`, refused: true };
      }
      // In the tools' words: no route, no internal specification, no HTTP status.
      if (/\/api\/|\bspec\b|\b(?:HTTP|status|with|answers) [1-5]\d\d\b|\b[45]\d\d [a-z]+_[a-z_]+/i.test(errorText))
        return { violation: `a tool error that speaks REST: ${errorText.slice(0, 300)}`, refused: true };
      const violation = errorBodyViolation(errorJson, 'tool error');
      if (violation) return { violation, refused: true };
    } else {
      refusedAll = false;
    }
  }
  return { refused: refusedAll };
}

// ---------------------------------------------------------------------------------------------
// GraphQL

export interface GraphQLCase {
  query: string;
  variables: Record<string, unknown>;
  /** GET (queries only) instead of POST. */
  get: boolean;
}

/** Values of custom scalars of the right shape (decimal strings, ISO times), whatever their size. */
const SCALAR_VALUES: Record<string, fc.Arbitrary<unknown>> = {
  Money: fc.constantFrom(
    '48.00',
    '49',
    '50',
    '149',
    '5',
    '0',
    '1000.5',
    '10000',
    '10000.01',
    '-1',
    '0.000001',
    '99999999999999999999.99',
    '00049.000000',
  ),
  Decimal: fc.constantFrom('1.5', '0', '-0', '120', '99999999999999999999.5', '-1'),
  DateTime: fc.constantFrom('2024-01-01T00:00:00.000Z', '1970-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z'),
};
/** Values of the wrong shape for any scalar. */
const WRONG_SCALARS = fc.oneof(
  fc.constantFrom(
    '50.001',
    '1e400',
    'NaN',
    '0x10',
    '-271821-04-20T00:00:00.000Z',
    '+275760-09-13T00:00:00.000Z',
    '2024-13-45',
  ),
  hostileString,
  hostileNumber,
  anyJson,
);

/**
 * A variable's value for a GraphQL input type. `wellTyped`: every value fits its type (with hostile
 * content: Unicode, NUL, sizes, boundary numbers), so the operation coerces and reaches the resolver.
 * Otherwise also nulls for non-null types, wrong types and stray fields, now and then.
 */
export function graphqlValue(
  type: GraphQLInputType,
  ctx: SchemaContext,
  wellTyped: boolean,
  depth = 0,
): fc.Arbitrary<unknown> {
  const wrong = (typed: fc.Arbitrary<unknown>) =>
    wellTyped ? typed : fc.oneof({ arbitrary: typed, weight: 20 }, { arbitrary: WRONG_SCALARS, weight: 1 });
  if (isNonNullType(type)) {
    const value = graphqlValue(type.ofType, ctx, wellTyped, depth);
    return wellTyped ? value : fc.oneof({ arbitrary: value, weight: 30 }, { arbitrary: fc.constant(null), weight: 1 });
  }
  if (isListType(type)) {
    const item = graphqlValue(type.ofType, ctx, wellTyped, depth + 1);
    return fc.oneof(
      { arbitrary: fc.array(item, { maxLength: depth > 2 ? 1 : 4 }), weight: 30 },
      { arbitrary: item, weight: 2 },
      { arbitrary: fc.constant(null), weight: wellTyped ? 0 : 1 },
      { arbitrary: fc.constant(Array.from({ length: 1_001 }, (_, i) => `x${i}`)), weight: 1 },
    );
  }
  if (isEnumType(type)) return wrong(fc.constantFrom(...type.getValues().map((v) => v.name)));
  if (isInputObjectType(type)) {
    if (depth > 4) return fc.constant({});
    const fields = Object.values(type.getFields()).map((f) =>
      fc.option(
        graphqlValue(f.type, ctx, wellTyped, depth + 1).map((v) => [f.name, v] as const),
        { nil: undefined, freq: isNonNullType(f.type) ? 20 : 2 },
      ),
    );
    const stray = wellTyped
      ? fc.constant(undefined)
      : fc.option(fc.tuple(hostileKey, anyJson), { nil: undefined, freq: 20 });
    return wrong(
      fc.tuple(fc.tuple(...fields), stray).map(([present, extra]) => {
        const out: Record<string, unknown> = {};
        for (const entry of present) if (entry) defineField(out, entry[0], entry[1]);
        if (extra) defineField(out, extra[0], extra[1]);
        return out;
      }),
    );
  }
  if (!isScalarType(type)) return anyJson;
  switch (type.name) {
    case 'Int':
      return wrong(
        fc.oneof(
          fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
          fc.constantFrom(0, -1, 1, 20, 100, 101, 1000, 2 ** 31 - 1, -(2 ** 31)),
        ),
      );
    case 'Float':
      return wrong(hostileNumber);
    case 'Boolean':
      return wrong(fc.boolean());
    case 'String':
    case 'ID':
      return wrong(
        fc.oneof(
          { arbitrary: hostileString, weight: 3 },
          ...(ctx.ids.length ? [{ arbitrary: fc.constantFrom(...ctx.ids), weight: 2 }] : []),
        ),
      );
    default:
      return wrong(SCALAR_VALUES[type.name] ?? hostileString);
  }
}

/** A selection of `type`'s fields: `__typename`, some leaves, and some nested fields with their own arguments as variables. */
function selection(
  type: ReturnType<typeof getNamedType>,
  ctx: SchemaContext,
  wellTyped: boolean,
  vars: { next: number },
  depth: number,
): fc.Arbitrary<{ text: string; defs: string[]; values: Record<string, unknown> }> {
  const empty = { text: '', defs: [] as string[], values: {} as Record<string, unknown> };
  if (!(isObjectType(type) || isInterfaceType(type))) return fc.constant(empty);
  const fields = Object.values(type.getFields());
  // `userErrors` always (it tells a refused mutation), the other fields now and then.
  const parts = fields.map((field) =>
    field.name === 'userErrors'
      ? fc.constant({ text: 'userErrors { code field message }', defs: [], values: {} })
      : fc.option(fieldSelection(field, ctx, wellTyped, vars, depth + 1), { nil: undefined, freq: 2 }),
  );
  return fc.tuple(...parts).map((chosen) => {
    const picked = chosen.filter((c): c is NonNullable<typeof c> => c !== undefined);
    return {
      text: `{ __typename ${picked.map((p) => p.text).join(' ')} }`,
      defs: picked.flatMap((p) => p.defs),
      values: Object.assign({}, ...picked.map((p) => p.values)),
    };
  });
}

/** A field with its arguments as variables (`$v3: Int`) and its selection. */
function fieldSelection(
  field: GraphQLField<unknown, unknown>,
  ctx: SchemaContext,
  wellTyped: boolean,
  vars: { next: number },
  depth: number,
): fc.Arbitrary<{ text: string; defs: string[]; values: Record<string, unknown> }> {
  const named = getNamedType(field.type);
  if (!isLeafType(named) && depth > 3) return fc.constant({ text: '', defs: [], values: {} });
  if (isUnionType(named)) return fc.constant({ text: `${field.name} { __typename }`, defs: [], values: {} });
  const args = field.args.map((arg) => ({ arg, name: `v${vars.next++}` }));
  const argValues = fc.tuple(...args.map(({ arg }) => argumentValue(arg, ctx, wellTyped)));
  const sub = isLeafType(named)
    ? fc.constant({ text: '', defs: [] as string[], values: {} as Record<string, unknown> })
    : selection(named, ctx, wellTyped, vars, depth);
  return fc.tuple(argValues, sub).map(([values, inner]) => {
    const given = args.filter((_, i) => values[i] !== OMIT);
    const call = given.length ? `(${given.map(({ arg, name }) => `${arg.name}: $${name}`).join(', ')})` : '';
    const out: Record<string, unknown> = { ...inner.values };
    for (const { name } of given) out[name] = values[args.findIndex((a) => a.name === name)];
    return {
      text: `${field.name}${call} ${inner.text}`,
      defs: [...given.map(({ arg, name }) => `$${name}: ${String(arg.type)}`), ...inner.defs],
      values: out,
    };
  });
}

const OMIT = Symbol('omitted argument');

/** An argument's variable value, or OMIT (a required one left out is a validation error). */
function argumentValue(arg: GraphQLArgument, ctx: SchemaContext, wellTyped: boolean): fc.Arbitrary<unknown> {
  const omitted = isNonNullType(arg.type) ? (wellTyped ? 0 : 1) : 3;
  return fc.oneof(
    { arbitrary: graphqlValue(arg.type, ctx, wellTyped), weight: 8 },
    { arbitrary: fc.constant(OMIT), weight: omitted },
  );
}

/**
 * Operations on the root field `field` of `operation`, with generated variables: half of them well
 * typed (they reach the resolver with hostile content), half with wrong types, nulls, missing and
 * stray arguments and variables.
 */
export function graphqlCase(
  schema: GraphQLSchema,
  operation: 'query' | 'mutation',
  field: string,
  ctx: SchemaContext,
): fc.Arbitrary<GraphQLCase> {
  const root = operation === 'query' ? schema.getQueryType()! : schema.getMutationType()!;
  const target = root.getFields()[field]!;
  const build = (wellTyped: boolean) =>
    fc
      .tuple(
        fieldSelection(target, ctx, wellTyped, { next: 0 }, 0),
        wellTyped
          ? fc.constant(undefined)
          : fc.option(fc.constantFrom('(bogus: 1)', '(first: 99999999999)', '(id: "\\u0000")', '(after: 1)'), {
              nil: undefined,
              freq: 12,
            }),
        wellTyped ? fc.constant(undefined) : fc.option(fc.tuple(hostileKey, anyJson), { nil: undefined, freq: 20 }),
        fc.boolean(),
      )
      .map(([sel, strayArg, strayVar, get]) => {
        let text = sel.text;
        // A stray argument literal on the root field: a validation error whatever the rest.
        if (strayArg && !text.startsWith(`${field}(`)) text = text.replace(field, `${field}${strayArg}`);
        const variables = { ...(withoutProtoKeys(sel.values) as Record<string, unknown>) };
        if (strayVar) defineField(variables, strayVar[0], strayVar[1]);
        const defs = sel.defs.length ? `(${sel.defs.join(', ')})` : '';
        return { query: `${operation} Fuzz${defs} { ${text} }`, variables, get: get && operation === 'query' };
      });
  return fc.oneof(build(true), build(false));
}

/** Why a GraphQL answer breaks the rules, or undefined; and whether the operation was refused. */
export function graphqlVerdict(
  status: number,
  text: string,
  field: string,
  mutation: boolean,
): { violation?: string; refused: boolean } {
  if (status >= 500) return { violation: `answered ${status}: ${text.slice(0, 300)}`, refused: true };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { violation: `${status} that is not JSON: ${text.slice(0, 300)}`, refused: true };
  }
  const errors = isRecord(body) ? body.errors : undefined;
  if (status >= 400 && (!Array.isArray(errors) || errors.length === 0))
    return { violation: `${status} without errors: ${text.slice(0, 300)}`, refused: true };
  // `errors` is walked as sent: anything but a list of errors fails (a violation, or a TypeError).
  for (const error of (errors ?? []) as Iterable<unknown>) {
    const extensions = isRecord(error) && isRecord(error.extensions) ? error.extensions : undefined;
    if (!isRecord(error) || typeof error.message !== 'string' || typeof extensions?.code !== 'string')
      return { violation: `an error without message and extensions.code: ${text.slice(0, 300)}`, refused: true };
    if (extensions.code === 'INTERNAL_ERROR')
      return { violation: `INTERNAL_ERROR: ${text.slice(0, 300)}`, refused: true };
  }
  const value = isRecord(body) && isRecord(body.data) ? body.data[field] : undefined;
  const userErrors = mutation && isRecord(value) && Array.isArray(value.userErrors) ? value.userErrors : [];
  return { refused: value === null || value === undefined || userErrors.length > 0 };
}

// ---------------------------------------------------------------------------------------------
// Lanes: accounts of their own, with fixtures, whose writes are compared around each case

export interface Lane {
  accountId: string;
  key: string;
  /** A finished run of the account, with rows. */
  runId: string;
  /** A webhook of the account. */
  webhookId: string;
  /** Ids to mix into strings. */
  ids: string[];
  /** What the account had written after the last case (see `writesOf`). */
  writes: string;
}

/** What an account has written: runs, ledger entries, balances, webhooks, idempotency keys, delivered leads, allowance used. */
export async function writesOf(t: TestApp, accountId: string): Promise<string> {
  const [row] = await t.app.core.sql`
    select
      (select count(*) from run where account_id = ${accountId})::text || ' runs, ' ||
      (select count(*) from ledger_entry where account_id = ${accountId})::text || ' ledger entries, ' ||
      (select plan_micros::text || '+' || purchased_micros::text from wallet where account_id = ${accountId}) || ' wallet, ' ||
      (select count(*) from webhook where account_id = ${accountId})::text || ' webhooks, ' ||
      (select count(*) from idempotency_key where account_id = ${accountId})::text || ' idempotency keys, ' ||
      (select count(*) from delivered_lead where account_id = ${accountId})::text || ' delivered leads, ' ||
      (select coalesce(sum(used), 0) from daily_usage where account_id = ${accountId})::text || ' allowance used' as writes`;
  return row!.writes as string;
}

/** Rows of the finished run every lane has (a maps run: the columns of a place). */
const FIXTURE_ROWS = [
  {
    name: 'Smile Dental',
    category: 'Dentist',
    city: 'Denver',
    phone: '+1 303-555-0100',
    emails: ['hi@smile.test'],
    rating: 4.5,
  },
  { name: '=HYPERLINK("x")', category: 'Dentist', city: 'Denver', phone: null, emails: [], rating: null },
  { name: 'Zed, "the" dentist', category: 'Dentist', city: 'Boulder', phone: '-12', emails: [], rating: 3 },
];

/** A lane: an account with an empty wallet (every valid paid start is refused 402), a finished run with rows, and a webhook. */
export async function createLane(t: TestApp): Promise<Lane> {
  const { accountId, apiKey } = await t.account({ creditsMicros: 0n });
  const sql = t.app.core.sql;
  const runId = newRunId();
  await sql`insert into run (id, account_id, tool, status, status_message, input, requested, handled, item_count, started_at, finished_at, expires_at)
    values (${runId}, ${accountId}, 'maps', 'SUCCEEDED', 'Done', ${JSON.stringify({ searchStringsArray: ['dentist'] })}::jsonb, 3, 3, 3, now(), now(), now() + interval '2 days')`;
  for (const [seq, row] of FIXTURE_ROWS.entries())
    await sql`insert into run_item (run_id, seq, data) values (${runId}, ${seq}, ${JSON.stringify(row)}::jsonb)`;
  const created = await t.request('POST', '/api/v1/webhooks', {
    key: apiKey,
    body: { url: 'https://example.com/hooks/fuzz' },
  });
  if (created.status !== 201) throw new Error(`webhook fixture: ${created.status} ${created.text}`);
  const webhookId = created.body.webhook.id as string;
  return {
    accountId,
    key: apiKey,
    runId,
    webhookId,
    ids: [runId, webhookId, accountId],
    writes: await writesOf(t, accountId),
  };
}

/**
 * Records what the lane's account has written since the last case; throws when the case was refused
 * and something was written anyway.
 */
export async function checkWrites(t: TestApp, lane: Lane, refused: boolean, what: () => string): Promise<void> {
  const now = await writesOf(t, lane.accountId);
  const before = lane.writes;
  lane.writes = now;
  if (refused && now !== before) throw new Error(`a refused request wrote: ${before} → ${now}\n${what()}`);
}

/** A pool of lanes: each route takes a free one for its cases and gives it back. */
export class LanePool {
  private readonly free: Lane[];
  private readonly waiting: ((lane: Lane) => void)[] = [];
  constructor(lanes: Lane[]) {
    this.free = [...lanes];
  }
  async use<T>(work: (lane: Lane) => Promise<T>): Promise<T> {
    const lane = this.free.pop() ?? (await new Promise<Lane>((resolve) => this.waiting.push(resolve)));
    try {
      return await work(lane);
    } finally {
      const next = this.waiting.shift();
      if (next) next(lane);
      else this.free.push(lane);
    }
  }
}

/** The server is still up: /health answers 200. */
export async function assertHealthy(t: TestApp): Promise<void> {
  const res = await fetch(`${t.url}/health`);
  if (res.status !== 200) throw new Error(`/health answered ${res.status}`);
}

/** How each route answered, for the summary a suite prints (how much of it was refused, how much got through). */
export class Statuses {
  private readonly byRoute = new Map<string, Map<string, number>>();
  count(route: string, outcome: string) {
    const outcomes = this.byRoute.get(route) ?? new Map<string, number>();
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    this.byRoute.set(route, outcomes);
  }
  /** One line per route; empty unless FUZZ_VERBOSE. */
  summary(title: string): string {
    if (!FUZZ_VERBOSE) return '';
    const lines = [...this.byRoute].map(
      ([route, outcomes]) =>
        `  ${route}: ${[...outcomes]
          .sort()
          .map(([o, n]) => `${o} ×${n}`)
          .join(', ')}`,
    );
    return [`${title}:`, ...lines].join('\n');
  }
}

/** A case as text for a failure message, long values cut. */
export function describeCase(value: unknown): string {
  const text = JSON.stringify(value, (_, v) =>
    typeof v === 'string' && v.length > 200 ? `${v.slice(0, 200)}…(${v.length} chars)` : v,
  );
  return text.length > 2_000 ? `${text.slice(0, 2_000)}…` : text;
}

/** fast-check settings of every route's property. */
export const fuzzParameters = (): fc.Parameters<unknown> => ({
  numRuns: FUZZ_CASES,
  seed: FUZZ_SEED,
  endOnFailure: true,
});

// ---------------------------------------------------------------------------------------------
// `npm run fuzz -- --cases N [--seed S] [--face rest|graphql|mcp]`

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const option = (name: string) => {
    const at = args.indexOf(`--${name}`);
    return at >= 0 ? args[at + 1] : args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  };
  const cases = option('cases') ?? '1000';
  const seed = option('seed');
  const face = option('face');
  if (!/^\d+$/.test(cases)) throw new Error('--cases takes a whole number');
  const files = face ? [`test/fuzz/${face}.test.ts`] : ['test/fuzz/'];
  const result = spawnSync('npx', ['vitest', 'run', ...files], {
    stdio: 'inherit',
    env: { ...process.env, FUZZ_CASES: cases, FUZZ_VERBOSE: '1', ...(seed ? { FUZZ_SEED: seed } : {}) },
  });
  process.exit(result.status ?? 1);
}
