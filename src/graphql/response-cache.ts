/**
 * Per-caller cache of successful GraphQL answers, under the REST response cache's rules
 * (shared/answer-cache.ts): an answer is reused only for the same caller, operation text, variables
 * and operation name, and only while the registry's `generation()` is unchanged (any write, by any
 * process, invalidates everything); bounded in entries and bytes; off when either bound is 0.
 *
 * An Apollo plugin rather than a cache in front of the route: a hit is answered only after Apollo's
 * own checks (CSRF prevention, parsing, validation, persisted queries) and the operation limits, so
 * it skips execution and nothing else. The rate-limit quotas that the first execution spent are
 * spent again on each hit, as a REST hit spends its route's quota; when one is exhausted the
 * operation runs and answers its usual error. Only queries answered with data and no error are
 * kept. Answers that read the trace store (`traceStats`, `Tool.usage`) are kept under the trace
 * store's watermark as well (TraceStore.watermark: it moves after every write of spans, points or
 * retention, on any replica), so new spans show at once; when the mark cannot be read they are not
 * kept. `McpServer.usage` (the last 30 days: a window that slides with the clock) and `Agent.card`
 * (see below) are never kept.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import {
  BREAK,
  Kind,
  OperationTypeNode,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLSchema,
} from 'graphql';
import { callerKey } from '../auth/caller.ts';
import type { RequestContext } from '../context.ts';
import type { LimitedOperation } from '../rate-limits.ts';
import { AnswerCache, answerCacheEnabled, type AnswerCacheBounds } from '../shared/answer-cache.ts';

/**
 * Fields (`Type.field`) whose answer depends on more than the registry: those read from the trace
 * store (kept under its watermark too), and those never kept: `McpServer.usage` slides with the
 * clock, and `Agent.card`'s URLs may come from the request's `Host` (the key does not hold it; REST
 * caches cards only when PUBLIC_BASE_URL is set).
 */
const TRACE_FIELDS = new Set(['Skill.traceStats', 'Agent.traceStats', 'Tool.usage']);
const NEVER_FIELDS = new Set(['McpServer.usage', 'Agent.card']);

interface Entry {
  /** The answer's `data`, encoded once (a hit decodes its own copy). */
  data: string;
  /** The quotas the first execution spent, spent again on each hit. */
  spent: [LimitedOperation, number | undefined][];
}

/** Whether the document may be kept: `never`, under the trace store's watermark too (`traces`), or `registry` only. */
function freshnessOf(schema: GraphQLSchema, document: DocumentNode): 'never' | 'traces' | 'registry' {
  let found: 'never' | 'traces' | 'registry' = 'registry';
  const types = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(types, {
      [Kind.FIELD](node) {
        const field = `${types.getParentType()?.name ?? ''}.${node.name.value}`;
        if (NEVER_FIELDS.has(field)) {
          found = 'never';
          return BREAK;
        }
        if (TRACE_FIELDS.has(field)) found = 'traces';
        return undefined;
      },
    }),
  );
  return found;
}

/**
 * The variables as a key; null for those too deep to encode (execution refuses them as invalid
 * input, with its own error, so they are not kept).
 */
function keyOfVariables(variables: Record<string, unknown> | undefined): string | null {
  try {
    return JSON.stringify(variables ?? {});
  } catch {
    return null;
  }
}

/** The response cache as an Apollo plugin; none when the bounds turn it off. */
export function responseCachePlugin(bounds: AnswerCacheBounds): ApolloServerPlugin<RequestContext>[] {
  if (!answerCacheEnabled(bounds)) return [];
  const entries = new AnswerCache<Entry>(bounds);
  const plugin: ApolloServerPlugin<RequestContext> = {
    async requestDidStart({ contextValue: ctx }) {
      // An operation run without a request's context (executeOperation by a tool) is not cached.
      if ((ctx as Partial<RequestContext> | undefined)?.spendQuota === undefined) return {};
      // Record what this request's resolvers spend (the context is this request's own).
      const spent: Entry['spent'] = [];
      const spend = ctx.spendQuota.bind(ctx);
      ctx.spendQuota = (operation, calls) => {
        spent.push([operation, calls]);
        return spend(operation, calls);
      };
      let slot: { key: string; generation: string } | undefined;
      return {
        async responseForOperation(rc) {
          if (rc.operation.operation !== OperationTypeNode.QUERY) return null;
          const freshness = freshnessOf(rc.schema, rc.document);
          if (freshness === 'never') return null;
          const variables = keyOfVariables(rc.request.variables);
          if (variables === null) return null;
          const key = `${callerKey(ctx.caller)}\n${rc.operationName ?? ''}\n${variables}\n${rc.source}`;
          const watermark = freshness === 'traces' ? await ctx.traces.watermark().catch(() => null) : '';
          if (watermark === null) return null;
          const generation = `${await ctx.generation()}/${watermark}`;
          slot = { key, generation };
          const hit = entries.get(key, generation);
          if (hit === undefined) return null;
          for (const [operation, calls] of hit.spent)
            if ((await spend(operation, calls)).exceeded) {
              slot = undefined;
              return null;
            }
          slot = undefined;
          rc.response.http.headers.set('x-cache', 'hit');
          return {
            http: rc.response.http,
            body: { kind: 'single', singleResult: { data: JSON.parse(hit.data) as Record<string, unknown> } },
          };
        },
        async willSendResponse(rc) {
          if (slot === undefined || rc.response.body.kind !== 'single') return;
          const result = rc.response.body.singleResult;
          if (result.errors !== undefined || result.data == null) return;
          if (rc.response.http.status !== undefined && rc.response.http.status !== 200) return;
          const data = JSON.stringify(result.data);
          entries.set(slot.key, slot.generation, { data, spent: [...spent] }, Buffer.byteLength(data));
        },
      };
    },
  };
  return [plugin];
}
