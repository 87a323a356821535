/**
 * Execution of the subgraph's operations (issue 12): queries of the graph run compiled by
 * graphql-jit, which turns an operation into a JavaScript function once and then runs it without
 * graphql-js's per-field interpretation (the nested agent search spent most of its time there).
 * Everything else runs through graphql-js as Apollo would run it: federation's `_entities` and
 * `_service` (graphql-jit answered `_entities` with extra entries when some representations were
 * refused), introspection, mutations, and any request whose variables do not coerce (so their
 * errors keep graphql-js's wording and Apollo's BAD_USER_INPUT handling). An operation whose
 * lists outgrew the request's list budget runs again on graphql-js with the budget refilled:
 * graphql-jit reports every list refused after the first (hundreds of errors where graphql-js
 * stops at the first one under a non-null list), graphql-js answers as it always did.
 *
 * Apollo Server 5 has one hook for an executor, its gateway interface: `load` hands Apollo the
 * schema and this executor; parsing, validation, persisted queries, the limits plugin and error
 * formatting stay Apollo's. Compiled operations are kept per parsed document (Apollo keeps parsed
 * documents in its bounded LRU, so they go when it drops them).
 */
import type { ApolloServerOptionsWithGateway, BaseContext } from '@apollo/server';
import {
  execute,
  GraphQLError,
  Kind,
  OperationTypeNode,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type SourceLocation,
} from 'graphql';
import { getVariableValues } from 'graphql/execution/values.js';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { OPERATION_TOO_LARGE, refillListBudget } from './limits/list-budget.ts';

type GatewayInterface = ApolloServerOptionsWithGateway<BaseContext>['gateway'];
type GatewayExecutor = NonNullable<Awaited<ReturnType<GatewayInterface['load']>>['executor']>;

/** Root fields graphql-js keeps: federation's and introspection's. */
const STANDARD_ROOT_FIELDS = new Set(['_entities', '_service', '__schema', '__type']);

/** Whether the operation's root selection (through fragments) asks for a field graphql-js keeps. */
function asksStandardField(set: SelectionSetNode, document: DocumentNode, seen = new Set<string>()): boolean {
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      if (STANDARD_ROOT_FIELDS.has(selection.name.value)) return true;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      if (asksStandardField(selection.selectionSet, document, seen)) return true;
    } else {
      const name = selection.name.value;
      if (seen.has(name)) continue;
      seen.add(name);
      const fragment = document.definitions.find((d) => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === name);
      if (fragment === undefined || fragment.kind !== Kind.FRAGMENT_DEFINITION) return true;
      if (asksStandardField(fragment.selectionSet, document, seen)) return true;
    }
  }
  return false;
}

/** What graphql-jit's errors hold (its own class, typed as graphql-js's; `extensions` may be absent). */
interface JitError {
  message: string;
  locations?: readonly SourceLocation[];
  path?: readonly (string | number)[];
  originalError?: Error | null;
  extensions?: Record<string, unknown>;
}

/** graphql-jit's errors as graphql-js errors, so Apollo and formatGraphqlError read them as usual. */
function asGraphqlError(e: JitError): GraphQLError {
  const out = new GraphQLError(e.message, {
    ...(e.path !== undefined ? { path: e.path } : {}),
    ...(e.originalError != null ? { originalError: e.originalError } : {}),
    ...(e.extensions !== undefined ? { extensions: e.extensions } : {}),
  });
  if (e.locations !== undefined) (out as { locations?: unknown }).locations = e.locations;
  return out;
}

/**
 * The executor: compiled queries where that is safe (see the file comment), graphql-js otherwise.
 * Every field has a resolver of its own (field-resolver.ts resolveUnresolvedFields): graphql-jit
 * has no default field resolver.
 */
function createExecutor(schema: GraphQLSchema): GatewayExecutor {
  const compiled = new WeakMap<DocumentNode, Map<string, CompiledQuery | null>>();
  const compiledFor = (document: DocumentNode, operation: OperationDefinitionNode, name: string | undefined) => {
    let byName = compiled.get(document);
    if (byName === undefined) {
      byName = new Map();
      compiled.set(document, byName);
    }
    const key = name ?? '';
    let query = byName.get(key);
    if (query === undefined) {
      const result =
        operation.operation === OperationTypeNode.QUERY && !asksStandardField(operation.selectionSet, document)
          ? compileQuery(schema, document, name, { disablingCapturingStackErrors: true })
          : null;
      query = result !== null && isCompiledQuery(result) ? result : null;
      byName.set(key, query);
    }
    return query;
  };

  return async (requestContext) => {
    const { document, operation, operationName, context } = requestContext;
    const name = operationName ?? undefined;
    const variables = requestContext.request.variables ?? {};
    const query = compiledFor(document, operation, name);
    const coerced = query === null ? null : getVariableValues(schema, operation.variableDefinitions ?? [], variables);
    const standard = () =>
      execute({ schema, document, contextValue: context, variableValues: variables, operationName: name });
    if (query === null || coerced === null || coerced.errors !== undefined) return standard();
    const result = await query.query(undefined, context, variables);
    if (result.errors === undefined) return result;
    const errors = result.errors as readonly JitError[];
    if (errors.some((e) => e.extensions?.code === OPERATION_TOO_LARGE)) {
      refillListBudget(context);
      return standard();
    }
    return { ...result, errors: errors.map(asGraphqlError) };
  };
}

/**
 * Apollo's gateway interface over this subgraph's own schema: no supergraph, no updates, just the
 * schema and the executor. Every field of `schema` must have a resolver.
 */
export function compiledExecution(schema: GraphQLSchema): GatewayInterface {
  return {
    async load() {
      return { executor: createExecutor(schema) };
    },
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: '' });
      return () => undefined;
    },
    async stop() {},
  };
}
