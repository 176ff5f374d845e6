import {
  getOperationAST,
  GraphQLError,
  getVariableValues,
  Kind,
  TypeInfo,
  validate as validateDocument,
  visit,
  visitWithTypeInfo,
  BREAK,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
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

/** Whether the operation of this context has variables that do not coerce (see useCompiledQueries). */
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
  byOperation: Map<string, Measured>;
}

/** Keyed by the parsed document: yoga's parse cache hands out the same object for the same text. */
const measures = new WeakMap<DocumentNode, DocumentMeasures>();

function measuresOf(schema: GraphQLSchema, document: DocumentNode): DocumentMeasures {
  let known = measures.get(document);
  if (!known) measures.set(document, (known = { readsVariables: measureReadsVariables(schema, document), byOperation: new Map() }));
  return known;
}

/** The operation's depth, breadth and complexity with these (coerced-checked) variables. */
function measure(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, context: unknown, variables: Record<string, unknown>): Measured {
  const known = measuresOf(schema, document);
  const name = operation.name?.value ?? '';
  const cached = known.readsVariables ? undefined : known.byOperation.get(name);
  if (cached) return cached;
  const fragments = document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION);
  const measured = complexityFromQuery({ kind: Kind.DOCUMENT, definitions: [operation, ...fragments] }, { schema, ctx: context as object, variables });
  if (!known.readsVariables) known.byOperation.set(name, measured);
  return measured;
}

/**
 * Depth, breadth and complexity checked when an operation starts: after the document validates, with
 * the request's variables, so a subscription is refused before it subscribes, not at its first event.
 * The operation to run is measured directly (the Pothos plugin's `complexityFromQuery`, the sum its
 * rule takes, without a second walk of the whole document), once per document when its measure does
 * not read variables; a document whose operation cannot be told goes through the plugin's rule
 * (`createComplexityRule`). The plugin's own check on root resolvers stays as a backstop.
 */
export function useComplexityAtStart(): Plugin<{ params?: { operationName?: string | null; variables?: Record<string, unknown> | null } }> {
  return {
    onValidate({ context, params: { schema: validated, documentAST } }) {
      return ({ valid, setResult }) => {
        if (!valid) return;
        const operationName = context.params?.operationName ?? undefined;
        const variableValues = context.params?.variables ?? {};
        const operation = getOperationAST(documentAST, operationName);
        // Variables that do not coerce are the execution's to refuse (BAD_USER_INPUT), not a complexity matter.
        if (operation?.variableDefinitions?.length && getVariableValues(validated, operation.variableDefinitions, variableValues).errors) {
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
            check(measure(validated, documentAST, operation, context, variableValues), (e) => errors.push(e));
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
