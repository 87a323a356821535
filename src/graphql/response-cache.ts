/**
 * Per-caller cache of successful GraphQL answers, under the REST response cache's rules
 * (shared/answer-cache.ts): an answer is reused only for the same caller, operation text, variables
 * and operation name, and only while the registry's `generation()` is unchanged (any write, by any
 * process, invalidates everything); bounded in entries and bytes; off when either bound is 0.
 *
 * An Apollo plugin keeps the answers and answers a hit only after Apollo's own checks (CSRF
 * prevention, parsing, validation, persisted queries) and the operation limits, skipping execution.
 * Once Apollo has answered a request, an identical one (same caller, `Accept`, operation name,
 * variables and text, a POST of JSON without persisted-query extensions) is answered by the route
 * before Apollo (`ResponseCache.ready`): those checks depend on nothing else, so they passed for it
 * already; the answer's bytes and headers are the ones Apollo sent. The rate-limit quotas that the
 * first execution spent are
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
 * clock, `Agent.card`'s URLs may come from the request's `Host` (the key does not hold it; REST
 * caches cards only when PUBLIC_BASE_URL is set), and insights, whose writes by detection move no
 * generation on either engine (so that they do not empty every tenant's caches each hour), and
 * webhook subscriptions with them. `Workspace.insightSettings` is kept like any registry read:
 * writing a workspace's overrides moves the generation on both engines (a bump in the write's
 * transaction on PostgreSQL, triggers on SQLite), so no answer outlives them.
 */
const TRACE_FIELDS = new Set(['Skill.traceStats', 'Agent.traceStats', 'Tool.usage']);
const NEVER_FIELDS = new Set([
  'McpServer.usage',
  'Agent.card',
  'Skill.insights',
  'Agent.insights',
  'Workspace.insights',
  'Workspace.webhookSubscriptions',
]);

interface Entry {
  /**
   * The answer as Apollo encodes a result of data only (`{"data":…}` and a newline), in UTF-8,
   * once: a hit in Apollo decodes its own copy of the data, a hit before Apollo sends the bytes.
   */
  body: Buffer;
  /** The quotas the first execution spent, spent again on each hit. */
  spent: [LimitedOperation, number | undefined][];
  /** Kept under the trace store's watermark too. */
  traces: boolean;
  /**
   * The head Apollo sent with the answer (its content type follows the request's `Accept`, which
   * the key holds), once the route saw it: a repeat of the request is then answered before Apollo.
   */
  head?: { contentType: string; cacheControl: string | undefined };
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

/**
 * The key of an answer: the caller, the request's `Accept` (the answer's content type follows it),
 * its operation name as sent, its variables and the operation text.
 */
function keyOf(ctx: RequestContext, accept: string, operationName: string, variables: string, query: string): string {
  return `${callerKey(ctx.caller)}\n${accept}\n${operationName}\n${variables}\n${query}`;
}

/** The generation an answer is kept at: the registry's, and the trace store's watermark when it read traces; null when unreadable. */
async function generationOf(ctx: RequestContext, traces: boolean): Promise<string | null> {
  const watermark = traces ? await ctx.traces.watermark().catch(() => null) : '';
  if (watermark === null) return null;
  return `${await ctx.generation()}/${watermark}`;
}

/** What the route hands the response cache of a request (Fastify's, but only what is read). */
interface RouteRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  ctx: RequestContext;
}

/** What the route hands the response cache of its reply. */
interface RouteReply {
  statusCode: number;
  getHeader(name: string): unknown;
  header(name: string, value: string): unknown;
}

/** The GraphQL response cache: its Apollo plugins, and the route's answers from it before Apollo (see `ready`). */
export interface ResponseCache {
  plugins: ApolloServerPlugin<RequestContext>[];
  /**
   * The body of a kept answer to this very request (its headers set on `reply`), before Apollo
   * runs; undefined to let Apollo answer. Only a POST of JSON (which passes Apollo's CSRF
   * prevention) with a string \`query\` and no \`extensions\` (no persisted query) is answered
   * here, and only once Apollo answered the same request (same caller, \`Accept\`, operation name,
   * variables and text) with data and no error at the current generation: parsing, validation and
   * the operation limits depend on nothing else, so they passed then and would pass now. The
   * quotas are spent again as on any hit.
   */
  ready(request: RouteRequest, reply: RouteReply): Promise<Buffer | undefined>;
  /** After Apollo answered: the head of an answer just kept, for `ready`. */
  sent(request: RouteRequest, reply: RouteReply): void;
}

/** The parts of a POST body that key its answer; null when `ready` leaves the request to Apollo. */
function routeKey(request: RouteRequest): string | null {
  if (request.method !== 'POST') return null;
  const type = request.headers['content-type'];
  if (typeof type !== 'string' || type.split(';')[0]?.trim().toLowerCase() !== 'application/json') return null;
  const body = request.body as Record<string, unknown> | null;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  if (typeof body.query !== 'string' || body.extensions !== undefined) return null;
  const name = body.operationName ?? '';
  const vars = body.variables ?? undefined;
  if (typeof name !== 'string') return null;
  if (vars !== undefined && (typeof vars !== 'object' || Array.isArray(vars))) return null;
  const variables = keyOfVariables(vars as Record<string, unknown> | undefined);
  if (variables === null) return null;
  const accept = request.headers.accept;
  return keyOf(request.ctx, typeof accept === 'string' ? accept : '', name, variables, body.query);
}

/** The response cache; `undefined` when the bounds turn it off. */
export function createResponseCache(bounds: AnswerCacheBounds): ResponseCache | undefined {
  if (!answerCacheEnabled(bounds)) return undefined;
  const entries = new AnswerCache<Entry>(bounds);
  /**
   * The entry each request kept, until the route has seen its head; by the request's deadline
   * signal, one per request and shared by Apollo's copy of the context.
   */
  const keptBy = new WeakMap<AbortSignal, Entry>();
  /** Requests whose hit `ready` declined for an exhausted quota: Apollo runs them, as it runs its own declined hits. */
  const declined = new WeakSet<AbortSignal>();
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
      let slot: { key: string; generation: string; traces: boolean } | undefined;
      return {
        async responseForOperation(rc) {
          if (rc.operation.operation !== OperationTypeNode.QUERY || declined.has(ctx.signal)) return null;
          const freshness = freshnessOf(rc.schema, rc.document);
          if (freshness === 'never') return null;
          const variables = keyOfVariables(rc.request.variables);
          if (variables === null) return null;
          const accept = rc.request.http?.headers.get('accept') ?? '';
          const key = keyOf(ctx, accept, rc.request.operationName ?? '', variables, rc.source);
          const traces = freshness === 'traces';
          const generation = await generationOf(ctx, traces);
          if (generation === null) return null;
          slot = { key, generation, traces };
          const hit = entries.get(key, generation);
          if (hit === undefined) return null;
          slot = undefined;
          if (!(await spendAgain(hit, spend))) return null;
          rc.response.http.headers.set('x-cache', 'hit');
          return {
            http: rc.response.http,
            body: {
              kind: 'single',
              singleResult: { data: (JSON.parse(hit.body.toString()) as { data: Record<string, unknown> }).data },
            },
          };
        },
        async willSendResponse(rc) {
          if (slot === undefined || rc.response.body.kind !== 'single') return;
          const result = rc.response.body.singleResult;
          if (result.errors !== undefined || result.data == null) return;
          if (rc.response.http.status !== undefined && rc.response.http.status !== 200) return;
          // Apollo's own encoding of a result of data only (prettyJSONStringify).
          const body = Buffer.from(`${JSON.stringify({ data: result.data })}\n`);
          const entry: Entry = { body, spent: [...spent], traces: slot.traces };
          entries.set(slot.key, slot.generation, entry, body.length);
          keptBy.set(ctx.signal, entry);
        },
      };
    },
  };
  return {
    plugins: [plugin],
    async ready(request, reply) {
      const key = routeKey(request);
      if (key === null) return undefined;
      const ctx = request.ctx;
      const peek = entries.peek(key);
      if (peek?.head === undefined) return undefined;
      const generation = await generationOf(ctx, peek.traces);
      const hit = generation === null ? undefined : entries.get(key, generation);
      if (hit?.head === undefined) return undefined;
      if (!(await spendAgain(hit, (operation, calls) => ctx.spendQuota(operation, calls)))) {
        declined.add(ctx.signal);
        return undefined;
      }
      reply.header('content-type', hit.head.contentType);
      if (hit.head.cacheControl !== undefined) reply.header('cache-control', hit.head.cacheControl);
      reply.header('x-cache', 'hit');
      return hit.body;
    },
    sent(request, reply) {
      const entry = keptBy.get(request.ctx.signal);
      if (entry === undefined || reply.statusCode !== 200) return;
      keptBy.delete(request.ctx.signal);
      const contentType = reply.getHeader('content-type');
      const cacheControl = reply.getHeader('cache-control');
      if (typeof contentType !== 'string') return;
      entry.head = { contentType, cacheControl: typeof cacheControl === 'string' ? cacheControl : undefined };
    },
  };
}

/** Spends the quotas a kept answer's first execution spent; false (nothing answered from it) once one is exhausted. */
async function spendAgain(
  hit: Entry,
  spend: (operation: LimitedOperation, calls: number | undefined) => Promise<{ exceeded: boolean }>,
): Promise<boolean> {
  for (const [operation, calls] of hit.spent) if ((await spend(operation, calls)).exceeded) return false;
  return true;
}
