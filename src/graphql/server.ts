/**
 * GraphQL on the service's Fastify instance (DESIGN §10): Apollo Server 5 at /graphql inside the
 * authenticated scope, so it has the same caller, deadline and RequestContext (loaders included)
 * as REST. The schema is a Federation v2 subgraph.
 *
 * Deliberate settings: batched HTTP requests off; Apollo's landing page off (browsers get the
 * service's explorer); introspection with the explorer (GRAPHQL_EXPLORER, off in production); schema
 * details in errors off in production; automatic persisted queries on, scoped per organization (in-memory
 * LRU unless a shared cache is passed); Apollo's cache-control, inline tracing, usage and schema reporting
 * switched off (per-field work nobody reads here). Bounds (DESIGN §12): document nesting checked
 * before parsing, tokens bounded while parsing, depth, alias and cost limits before execution
 * (the cost limit from config), and a list budget during execution. 5xx errors are logged with
 * the trace id.
 */
import { ApolloServer } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
  ApolloServerPluginSchemaReportingDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from '@apollo/server/plugin/disabled';
import type { PersistedQueryOptions } from '@apollo/server';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import type { RequestContext, Services } from '../context.ts';
import type { ApiError } from '../errors.ts';
import { orgScopedCache, runInOrg } from './apq-scope.ts';
import { cacheHintsPlugin } from './cache-hints.ts';
import { checkEntityRepresentations } from './entity-representations.ts';
import { errorLogPlugin } from './error-log.ts';
import { formatGraphqlError, graphqlRouteErrorHandler } from './errors.ts';
import { snakeCaseFieldResolver } from './field-resolver.ts';
import { DEFAULT_LIMITS, operationLimitsPlugin, type OperationLimits } from './limits/limits-plugin.ts';
import { budgetUnpagedLists } from './limits/list-budget.ts';
import { refuseDeepDocuments } from './limits/nesting.ts';
import { createResponseCache, type ResponseCache } from './response-cache.ts';
import { buildRegistrySubgraph } from './schema.ts';

/** Options of the GraphQL transport. */
export interface GraphqlOptions {
  /** Where automatic persisted queries are kept; a shared cache (Redis) in server mode. */
  apqCache?: PersistedQueryOptions['cache'];
  /** Operation limits; DEFAULT_LIMITS with the config's `graphqlMaxCost` otherwise. */
  limits?: Partial<OperationLimits>;
  /** Maps anything thrown before Apollo runs to a catalogue error (the app's REST mapping). */
  toApiError: (err: FastifyError) => ApiError;
}

/** Tokens a document may hold: parsing stops past it (the largest real queries hold a few thousand). */
export const MAX_TOKENS = 20_000;

/**
 * Built once per process, at import: building takes a few hundred milliseconds of CPU, which must
 * land neither in a request nor in the event-loop-delay window of the load shedder (DESIGN §7).
 */
const SCHEMA = buildRegistrySubgraph();
budgetUnpagedLists(SCHEMA, snakeCaseFieldResolver);
checkEntityRepresentations(SCHEMA);

/**
 * Builds the Apollo server of the subgraph (started by the caller); `log` gets its 5xx errors;
 * `cache` is the response cache whose plugins it runs (the route answers repeats from it).
 */
export function createApolloServer(
  services: Services,
  options: Omit<GraphqlOptions, 'toApiError'>,
  log?: FastifyBaseLogger,
  cache: ResponseCache | undefined = createResponseCache({
    maxEntries: services.config.responseCacheEntries,
    maxBytes: services.config.responseCacheBytes,
  }),
): ApolloServer<RequestContext> {
  const production = services.config.nodeEnv === 'production';
  const limits: OperationLimits = {
    ...DEFAULT_LIMITS,
    maxCost: services.config.bounds.graphqlMaxCost,
    ...options.limits,
  };
  const apqCache = options.apqCache;
  const apollo: ApolloServer<RequestContext> = new ApolloServer<RequestContext>({
    schema: SCHEMA,
    fieldResolver: snakeCaseFieldResolver,
    formatError: formatGraphqlError,
    allowBatchedHttpRequests: false,
    // Every request carries `Authorization`, which no browser sends cross-site without a preflight:
    // it counts as the preflight-forcing header, so GET queries of urql and friends are answered.
    csrfPrevention: { requestHeaders: ['authorization', 'x-apollo-operation-name', 'apollo-require-preflight'] },
    introspection: services.config.graphqlExplorer,
    hideSchemaDetailsFromClientErrors: production,
    includeStacktraceInErrorResponses: false,
    parseOptions: { maxLexicalTokens: MAX_TOKENS },
    // Apollo's own bounded LRU (its `cache`) unless a shared cache is given, scoped per organization.
    persistedQueries: { cache: orgScopedCache(() => apqCache ?? apollo.cache) },
    nodeEnv: services.config.nodeEnv,
    ...(log !== undefined ? { logger: log } : {}),
    plugins: [
      ApolloServerPluginCacheControlDisabled(),
      ApolloServerPluginInlineTraceDisabled(),
      ApolloServerPluginUsageReportingDisabled(),
      ApolloServerPluginSchemaReportingDisabled(),
      // Browsers get the service's own explorer (rest/console-routes.ts), never Apollo's CDN page.
      ApolloServerPluginLandingPageDisabled(),
      operationLimitsPlugin(limits),
      cacheHintsPlugin(),
      // After the limits: a hit skips execution only.
      ...(cache?.plugins ?? []),
      ...(log !== undefined ? [errorLogPlugin(log)] : []),
    ],
  });
  return apollo;
}

/** Serves GraphQL at /graphql in `api`, the authenticated scope whose hook sets `request.ctx`. */
export async function registerGraphql(
  api: FastifyInstance,
  services: Services,
  options: GraphqlOptions,
): Promise<void> {
  const cache = createResponseCache({
    maxEntries: services.config.responseCacheEntries,
    maxBytes: services.config.responseCacheBytes,
  });
  const apollo = createApolloServer(services, options, api.log, cache);
  await apollo.start();
  // Fastify owns shutdown (it drains connections); fastifyApolloDrainPlugin would call
  // fastify.close() again from inside this hook and never settle.
  api.addHook('onClose', async () => apollo.stop());
  const handle = fastifyApolloHandler(apollo, { context: async (request) => request.ctx });
  // A repeat of a kept answer is answered before Apollo (response-cache.ts `ready`); the caller's
  // organization follows the request into Apollo, for the persisted-query cache.
  const handler = async function (
    this: FastifyInstance,
    request: Parameters<typeof handle>[0],
    reply: Parameters<typeof handle>[1],
  ) {
    if (cache === undefined) return runInOrg(request.ctx.caller.orgId, () => handle.call(this, request, reply));
    const ready = await cache.ready(request, reply);
    // Bytes, sent as they are (the Apollo handler's reply type admits strings only).
    if (ready !== undefined) return (reply as FastifyReply).send(ready) as unknown as string;
    const body = await runInOrg(request.ctx.caller.orgId, () => handle.call(this, request, reply));
    cache.sent(request, reply);
    return body;
  };
  await api.register(async (scope) => {
    scope.setErrorHandler(graphqlRouteErrorHandler(options.toApiError));
    scope.route({
      method: ['GET', 'POST'],
      url: '/graphql',
      schema: { hide: true },
      preHandler: refuseDeepDocuments(),
      handler,
    });
  });
}
