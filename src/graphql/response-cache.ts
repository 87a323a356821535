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
 * kept. Operations selecting a field that reads the trace store (`traceStats`, `usage`) are not
 * cached: spans arrive, are pruned and are sealed without moving the generation, and the trace
 * store offers no version of its own to key on. Nor are those selecting `card` (see below).
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { BREAK, Kind, OperationTypeNode, visit, type DocumentNode } from 'graphql';
import { callerKey } from '../auth/caller.ts';
import type { RequestContext } from '../context.ts';
import type { LimitedOperation } from '../rate-limits.ts';
import { AnswerCache, answerCacheEnabled, type AnswerCacheBounds } from '../shared/answer-cache.ts';

/**
 * Fields that make an answer unfit for the cache: those read from the trace store (Query.traceStats,
 * Tool.usage, McpServer.usage), and `Agent.card`, whose URLs may come from the request's `Host`
 * (the key does not hold it; REST caches cards only when PUBLIC_BASE_URL is set).
 */
const UNCACHEABLE_FIELDS = new Set(['traceStats', 'usage', 'card']);

interface Entry {
  /** The answer's `data`, encoded once (a hit decodes its own copy). */
  data: string;
  /** The quotas the first execution spent, spent again on each hit. */
  spent: [LimitedOperation, number | undefined][];
}

/** True when the document selects an uncacheable field, in any fragment. */
function selectsUncacheable(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    [Kind.FIELD](node) {
      if (!UNCACHEABLE_FIELDS.has(node.name.value)) return undefined;
      found = true;
      return BREAK;
    },
  });
  return found;
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
          if (rc.operation.operation !== OperationTypeNode.QUERY || selectsUncacheable(rc.document)) return null;
          const variables = JSON.stringify(rc.request.variables ?? {});
          const key = `${callerKey(ctx.caller)}\n${rc.operationName ?? ''}\n${variables}\n${rc.source}`;
          const generation = await ctx.generation();
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
