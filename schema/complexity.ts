import {
  getIntrospectionQuery,
  getNamedType,
  getOperationAST,
  GraphQLError,
  getVariableValues,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  parse,
  TypeInfo,
  validate as validateDocument,
  visit,
  visitWithTypeInfo,
  BREAK,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { PothosValidationError } from '@pothos/core';
import { complexityFromQuery, createComplexityRule } from '@pothos/plugin-complexity';
import { builder, tooComplex, type Measure } from './builder.ts';
import type { GraphQLContext } from './context.ts';
import { graphQLErrorOf } from '../src/http/errors.ts';

interface Measured {
  depth: number;
  breadth: number;
  complexity: number;
}

/** An operation's measure: the Pothos plugin's, and that of its introspection. */
interface OperationMeasure extends Measured {
  introspection: IntrospectionMeasure;
}

/** The depth, breadth and complexity of an operation's introspection, and how many times it selects `__schema`. */
interface IntrospectionMeasure extends Measured {
  schemas: number;
}

/** The root fields that open introspection: the whole schema, and one type by name. */
const INTROSPECTION_TYPES: Record<string, string> = { __schema: '__Schema', __type: '__Type' };

/**
 * The measure of the introspection an operation selects: `__schema` and `__type` with everything under
 * them, each field of the introspection types counted as the complexity plugin counts a field (one
 * level of depth, one of breadth, its default complexity, its default list multiplier), so each
 * `ofType` of a type reference is a level. The plugin itself stops at `__schema` and `__type`: it
 * counts them as one field each and never looks under them. The other fields of the operation count
 * nothing here. Each selection set is measured once per type, however often fragments repeat it.
 */
function measureIntrospection(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
): IntrospectionMeasure {
  const fieldComplexity = builder.options.complexity?.defaultComplexity ?? 1;
  const listMultiplier = builder.options.complexity?.defaultListMultiplier ?? 1;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const known = new Map<SelectionSetNode, Map<string, IntrospectionMeasure>>();

  // `root`: the selections of the root type, where only the introspection fields count.
  const ofSet = (set: SelectionSetNode, type: GraphQLObjectType, root: boolean): IntrospectionMeasure => {
    const cached = known.get(set)?.get(type.name);
    if (cached) return cached;
    const sum: IntrospectionMeasure = { depth: 0, breadth: 0, complexity: 0, schemas: 0 };
    for (const selection of set.selections) {
      let part: IntrospectionMeasure;
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        const introspectionType = root ? INTROSPECTION_TYPES[name] : undefined;
        if (root && introspectionType === undefined) continue;
        const fieldType: GraphQLOutputType | undefined = introspectionType
          ? (schema.getType(introspectionType) as GraphQLObjectType)
          : type.getFields()[name]?.type;
        const named = fieldType && getNamedType(fieldType);
        const below =
          selection.selectionSet && isObjectType(named) ? ofSet(selection.selectionSet, named, false) : undefined;
        const multiplier =
          fieldType && isListType(isNonNullType(fieldType) ? fieldType.ofType : fieldType) ? listMultiplier : 1;
        part = {
          depth: 1 + (below?.depth ?? 0),
          breadth: 1 + (below?.breadth ?? 0),
          complexity: fieldComplexity + (below?.complexity ?? 0) * multiplier,
          schemas: name === '__schema' && root ? 1 : 0,
        };
      } else {
        const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? fragments.get(selection.name.value) : selection;
        if (!fragment) continue;
        const condition = fragment.typeCondition ? schema.getType(fragment.typeCondition.name.value) : type;
        if (!isObjectType(condition)) continue;
        part = ofSet(fragment.selectionSet, condition, root);
      }
      sum.depth = Math.max(sum.depth, part.depth);
      sum.breadth += part.breadth;
      sum.complexity += part.complexity;
      sum.schemas += part.schemas;
    }
    const byType = known.get(set) ?? new Map<string, IntrospectionMeasure>();
    known.set(set, byType.set(type.name, sum));
    return sum;
  };

  const rootType = schema.getRootType(operation.operation);
  return rootType ? ofSet(operation.selectionSet, rootType, true) : { depth: 0, breadth: 0, complexity: 0, schemas: 0 };
}

/**
 * The introspection an operation may select: as much as the standard introspection query, which
 * GraphiQL, graphql-codegen and the console send (graphql-js's `getIntrospectionQuery` with every
 * option: its type references nine `ofType` deep), and `__schema` once.
 */
const introspectionAllowances = new WeakMap<GraphQLSchema, Measured>();

function introspectionAllowance(schema: GraphQLSchema): Measured {
  let allowance = introspectionAllowances.get(schema);
  if (!allowance) {
    const standard = parse(
      getIntrospectionQuery({
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
        experimentalDirectiveDeprecation: true,
        oneOf: true,
      }),
    );
    const operation = getOperationAST(standard);
    if (!operation) throw new Error('the standard introspection query has no operation');
    allowance = measureIntrospection(schema, standard, operation);
    introspectionAllowances.set(schema, allowance);
  }
  return allowance;
}

/** The complexity plugin's limits (schema/builder.ts), for the caller of `context`. */
function complexityLimits(context: unknown): { depth?: number; breadth?: number; complexity?: number } {
  const limit = builder.options.complexity?.limit;
  return (typeof limit === 'function' ? limit(context as GraphQLContext) : limit) ?? {};
}

/**
 * 400 `query_too_complex`, naming the measure, its value (unknown for tokens: parsing stops at the
 * limit) and the limit, in the message and in `details`. The same as a validation error: a 400
 * whatever the Accept header (yoga answers spec errors 200 to application/json).
 */
export function limitError(measure: Measure, value: number | undefined, limit: number): GraphQLError {
  const { message, extensions } = graphQLErrorOf(tooComplex(measure, value, limit));
  return new GraphQLError(message, { extensions: { ...extensions, http: { status: 400, spec: false } } });
}

/** Operations (by their context) whose variables do not coerce: graphql-js runs them, to refuse them in its words. */
const uncoerced = new WeakSet<object>();

/** Whether the operation of this context has variables that do not coerce (see compiledQueriesPlugin). */
export const hasUncoercedVariables = (context: object) => uncoerced.has(context);

/**
 * Whether a document's measure can depend on its variables: a field whose complexity is a function of
 * its arguments (page sizes, id lists) is given a variable. Fields' complexity functions read their
 * arguments only, never the context, so a document without such a field measures the same on every
 * request. Any operation and fragment of the document counts (conservative: one walk, once per document).
 */
function measureReadsVariables(schema: GraphQLSchema, document: DocumentNode): boolean {
  const typeInfo = new TypeInfo(schema);
  let reads = false;
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        if (typeof typeInfo.getFieldDef()?.extensions?.complexity !== 'function' || !node.arguments?.length) return;
        for (const argument of node.arguments) {
          visit(argument.value, {
            Variable() {
              reads = true;
              return BREAK;
            },
          });
        }
        if (reads) return BREAK;
      },
    }),
  );
  return reads;
}

/**
 * What is known of a (parsed, cached) document: whether its measure reads variables, and, when it does
 * not, the measure of each of its operations by name.
 */
interface DocumentMeasures {
  readsVariables: boolean;
  byOperation: Map<string, OperationMeasure>;
}

/** Keyed by the parsed document: yoga's parse cache hands out the same object for the same text. */
const measures = new WeakMap<DocumentNode, DocumentMeasures>();

function measuresOf(schema: GraphQLSchema, document: DocumentNode): DocumentMeasures {
  const known = measures.get(document);
  if (known) return known;
  const measured = { readsVariables: measureReadsVariables(schema, document), byOperation: new Map() };
  measures.set(document, measured);
  return measured;
}

/**
 * The operation's depth, breadth and complexity with these (coerced-checked) variables, and those of its introspection.
 */
function measure(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  context: unknown,
  variables: Record<string, unknown>,
): OperationMeasure {
  const known = measuresOf(schema, document);
  const name = operation.name?.value ?? '';
  const cached = known.readsVariables ? undefined : known.byOperation.get(name);
  if (cached) return cached;
  const fragments = document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION);
  const measured = {
    ...complexityFromQuery(
      { kind: Kind.DOCUMENT, definitions: [operation, ...fragments] },
      { schema, ctx: context as object, variables },
    ),
    introspection: measureIntrospection(schema, document, operation),
  };
  if (!known.readsVariables) known.byOperation.set(name, measured);
  return measured;
}

/**
 * The refusals of an operation's introspection: `__schema` more than once, or more depth, breadth or
 * complexity than the standard introspection query.
 */
function introspectionRefusals(schema: GraphQLSchema, measured: IntrospectionMeasure): GraphQLError[] {
  const errors: GraphQLError[] = [];
  if (measured.schemas > 1) errors.push(limitError('schemaSelections', measured.schemas, 1));
  if (measured.breadth === 0) return errors;
  const allowance = introspectionAllowance(schema);
  if (measured.depth > allowance.depth) errors.push(limitError('introspectionDepth', measured.depth, allowance.depth));
  if (measured.breadth > allowance.breadth)
    errors.push(limitError('introspectionBreadth', measured.breadth, allowance.breadth));
  if (measured.complexity > allowance.complexity)
    errors.push(limitError('introspectionComplexity', measured.complexity, allowance.complexity));
  return errors;
}

/**
 * Depth, breadth and complexity checked when an operation starts: after the document validates, with
 * the request's variables, so a subscription is refused before it subscribes, not at its first event.
 * The operation to run is measured directly (the Pothos plugin's `complexityFromQuery`, the sum its
 * rule takes, without a second walk of the whole document), once per document when its measure does
 * not read variables; a document whose operation cannot be told goes through the plugin's rule
 * (`createComplexityRule`), and is refused by the execution anyway. Its introspection is measured with
 * it and held to the standard introspection query's measure, `__schema` once (introspectionRefusals).
 * The plugin's own check on root resolvers stays as a backstop.
 */
export function complexityAtStartPlugin(): Plugin<{
  params?: { operationName?: string | null; variables?: Record<string, unknown> | null };
}> {
  return {
    onValidate({ context, params: { schema: validated, documentAST } }) {
      return ({ valid, setResult }) => {
        if (!valid) return;
        const operationName = context.params?.operationName ?? undefined;
        const variableValues = context.params?.variables ?? {};
        const operation = getOperationAST(documentAST, operationName);
        // Variables that do not coerce are the execution's to refuse (BAD_USER_INPUT), not a complexity matter.
        if (
          operation?.variableDefinitions?.length &&
          getVariableValues(validated, operation.variableDefinitions, variableValues).errors
        ) {
          uncoerced.add(context);
          return;
        }
        const limits = complexityLimits(context);
        const errors: GraphQLError[] = [];
        const check = (state: Measured, report: (error: GraphQLError) => void) => {
          for (const name of ['depth', 'breadth', 'complexity'] as const) {
            const limit = limits[name];
            if (typeof limit === 'number' && state[name] > limit) report(limitError(name, state[name], limit));
          }
        };
        if (operation) {
          try {
            const measured = measure(validated, documentAST, operation, context, variableValues);
            check(measured, (e) => errors.push(e));
            errors.push(...introspectionRefusals(validated, measured.introspection));
          } catch (err) {
            if (!(err instanceof PothosValidationError)) throw err;
            errors.push(err);
          }
        } else {
          const rule = createComplexityRule({ context, variableValues, operationName, validate: check });
          errors.push(...validateDocument(validated, documentAST, [rule]));
        }
        if (errors.length > 0) setResult(errors);
      };
    },
  };
}
