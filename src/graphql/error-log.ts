/**
 * Every GraphQL error answered as a 5xx is logged with the request's trace id (DESIGN §7), as
 * REST logs its 5xx: a resolver's internal error, a store outage, a deadline, and anything Apollo
 * fails on unexpectedly. The client gets the catalogue error (errors.ts), the log gets the cause.
 */
import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import type { FastifyBaseLogger } from 'fastify';
import type { RequestContext } from '../context.ts';
import { graphqlErrorStatus } from './errors.ts';

/** Logs the 5xx errors of every GraphQL request on `log`, with `trace_id`, `path` and the cause. */
export function errorLogPlugin(log: FastifyBaseLogger): ApolloServerPlugin<RequestContext> {
  const listener: GraphQLRequestListener<RequestContext> = {
    async didEncounterErrors({ errors, contextValue, operationName }) {
      for (const error of errors) {
        const status = graphqlErrorStatus(error);
        if (status < 500) continue;
        log.error(
          {
            trace_id: contextValue.traceId,
            status,
            path: error.path,
            operation: operationName,
            err: unwrapResolverError(error),
          },
          'graphql request failed',
        );
      }
    },
  };
  return {
    async requestDidStart() {
      return listener;
    },
    async unexpectedErrorProcessingRequest({ requestContext, error }) {
      log.error({ trace_id: requestContext.contextValue.traceId, status: 500, err: error }, 'graphql request failed');
    },
  };
}
