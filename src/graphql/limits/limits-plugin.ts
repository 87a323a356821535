/**
 * Operation limits (DESIGN §10, §12), on by default: selection depth, number of aliases, cost
 * (see analyze-operation.ts) and the trace-store work of its `Tool.usage` windows and of
 * `McpServer.usage` (trace-budget.ts), checked once the operation is resolved, with its variables,
 * and before anything executes. A refused operation gets Apollo's GRAPHQL_VALIDATION_FAILED with HTTP
 * 400 and `limit`, `value`, `max` extensions. An operation let through gets a list budget of
 * `maxCost` items (list-budget.ts), the backstop for the lists whose length the analysis estimates.
 */
import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import { ApolloServerErrorCode } from '@apollo/server/errors';
import {
  GraphQLError,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import type { RequestContext } from '../../context.ts';
import { analyzeOperation, type CostModel, type OperationCost } from './analyze-operation.ts';
import { openListBudget } from './list-budget.ts';
import { SERVER_USAGE_WORK, TRACE_WORK_BUDGET, usageWork } from './trace-budget.ts';

/** Upper bounds of an operation, and the cost model they are measured with. */
export interface OperationLimits extends CostModel {
  maxDepth: number;
  maxAliases: number;
  /** The largest cost, and the largest number of items the unpaged lists may hand out. */
  maxCost: number;
}

/** The defaults; the service takes `maxCost` from its config (GRAPHQL_MAX_COST). */
export const DEFAULT_LIMITS: OperationLimits = {
  maxDepth: 12,
  maxAliases: 30,
  maxCost: 25_000,
  defaultListSize: 10,
};

function refuse(limit: 'depth' | 'aliases' | 'cost' | 'trace_work', value: number, max: number): GraphQLError {
  return new GraphQLError(`operation ${limit} ${value} exceeds the limit of ${max}`, {
    extensions: { code: ApolloServerErrorCode.GRAPHQL_VALIDATION_FAILED, http: { status: 400 }, limit, value, max },
  });
}

/** Analyses kept per operation and variables: at most this many variable sets per operation. */
const MAX_VARIABLE_SETS = 16;

/**
 * Refuses operations over `limits` before they execute; opens the list budget of the others. An
 * operation's analysis depends on its document, its variables and the schema only: it is kept
 * per parsed operation (Apollo reuses the parsed document of a query text it has seen) and per
 * variables as sent.
 */
export function operationLimitsPlugin(limits: OperationLimits = DEFAULT_LIMITS): ApolloServerPlugin<RequestContext> {
  const analysed = new WeakMap<OperationDefinitionNode, Map<string, OperationCost>>();
  const analyse = (
    schema: GraphQLSchema,
    document: DocumentNode,
    operation: OperationDefinitionNode,
    variables: Record<string, unknown>,
  ): OperationCost => {
    let key: string | undefined;
    try {
      key = JSON.stringify(variables);
    } catch {
      key = undefined; // too deep to key: analysed each time
    }
    let byVariables = analysed.get(operation);
    const kept = key === undefined ? undefined : byVariables?.get(key);
    if (kept !== undefined) return kept;
    const fragments = document.definitions.filter(
      (d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION,
    );
    const found = analyzeOperation(schema, operation, fragments, variables, limits);
    if (key === undefined) return found;
    if (byVariables === undefined) {
      byVariables = new Map();
      analysed.set(operation, byVariables);
    }
    if (byVariables.size >= MAX_VARIABLE_SETS) byVariables.clear();
    byVariables.set(key, found);
    return found;
  };
  const listener: GraphQLRequestListener<RequestContext> = {
    async didResolveOperation({ schema, document, operation, request, contextValue }) {
      if (operation === undefined) return;
      const found = analyse(schema, document, operation, request.variables ?? {});
      if (found.depth > limits.maxDepth) throw refuse('depth', found.depth, limits.maxDepth);
      if (found.aliases > limits.maxAliases) throw refuse('aliases', found.aliases, limits.maxAliases);
      if (found.cost > limits.maxCost) throw refuse('cost', found.cost, limits.maxCost);
      const work = usageWork(found.usageWindows) + (found.serverUsage ? SERVER_USAGE_WORK : 0);
      if (work > TRACE_WORK_BUDGET) throw refuse('trace_work', work, TRACE_WORK_BUDGET);
      openListBudget(contextValue, limits.maxCost);
    },
  };
  return {
    async requestDidStart() {
      return listener;
    },
  };
}
