/**
 * GraphQL on the service's Fastify instance (DESIGN §10): Apollo Server 5 at /graphql inside the
 * authenticated scope, so it has the same caller, deadline and RequestContext (loaders included)
 * as REST. The schema is a Federation v2 subgraph.
 *
 * Deliberate settings: batched HTTP requests off; introspection, landing page and schema details
 * in errors off in production; automatic persisted queries on (in-memory LRU unless a shared cache
 * is passed); cache-control, inline tracing, usage and schema reporting switched off (per-field
 * work nobody reads here); depth, alias and cost limits on.
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
import type { FastifyError, FastifyInstance } from 'fastify';
import type { RequestContext, Services } from '../context.ts';
import type { ApiError } from '../errors.ts';
import { formatGraphqlError, graphqlRouteErrorHandler } from './errors.ts';
import { snakeCaseFieldResolver } from './field-resolver.ts';
import { DEFAULT_LIMITS, operationLimitsPlugin, type OperationLimits } from './limits/limits-plugin.ts';
import { buildRegistrySubgraph } from './schema.ts';

/** Options of the GraphQL transport. */
export interface GraphqlOptions {
  /** Where automatic persisted queries are kept; a shared cache (Redis) in server mode. */
  apqCache?: PersistedQueryOptions['cache'];
  /** Operation limits; DEFAULT_LIMITS otherwise. */
  limits?: Partial<OperationLimits>;
  /** Maps anything thrown before Apollo runs to a catalogue error (the app's REST mapping). */
  toApiError: (err: FastifyError) => ApiError;
}

/**
 * Built once per process, at import: building takes a few hundred milliseconds of CPU, which must
 * land neither in a request nor in the event-loop-delay window of the load shedder (DESIGN §7).
 */
const SCHEMA = buildRegistrySubgraph();

/** Builds the Apollo server of the subgraph (started by the caller). */
export function createApolloServer(services: Services, options: Omit<GraphqlOptions, 'toApiError'>): ApolloServer<RequestContext> {
  const production = services.config.nodeEnv === 'production';
  return new ApolloServer<RequestContext>({
    schema: SCHEMA,
    fieldResolver: snakeCaseFieldResolver,
    formatError: formatGraphqlError,
    allowBatchedHttpRequests: false,
    introspection: !production,
    hideSchemaDetailsFromClientErrors: production,
    includeStacktraceInErrorResponses: false,
    persistedQueries: options.apqCache === undefined ? {} : { cache: options.apqCache },
    nodeEnv: services.config.nodeEnv,
    plugins: [
      ApolloServerPluginCacheControlDisabled(),
      ApolloServerPluginInlineTraceDisabled(),
      ApolloServerPluginUsageReportingDisabled(),
      ApolloServerPluginSchemaReportingDisabled(),
      ...(production ? [ApolloServerPluginLandingPageDisabled()] : []),
      operationLimitsPlugin({ ...DEFAULT_LIMITS, ...options.limits }),
    ],
  });
}

/** Serves GraphQL at /graphql in `api`, the authenticated scope whose hook sets `request.ctx`. */
export async function registerGraphql(api: FastifyInstance, services: Services, options: GraphqlOptions): Promise<void> {
  const apollo = createApolloServer(services, options);
  await apollo.start();
  // Fastify owns shutdown (it drains connections); fastifyApolloDrainPlugin would call
  // fastify.close() again from inside this hook and never settle.
  api.addHook('onClose', async () => apollo.stop());
  await api.register(async (scope) => {
    scope.setErrorHandler(graphqlRouteErrorHandler(options.toApiError));
    scope.route({
      method: ['GET', 'POST'],
      url: '/graphql',
      schema: { hide: true },
      handler: fastifyApolloHandler(apollo, { context: async (request) => request.ctx }),
    });
  });
}
