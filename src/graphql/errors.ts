/**
 * GraphQL error mapping (DESIGN §7): an error of the catalogue keeps its code in
 * `extensions.code` and its HTTP status in `extensions.http.status`; GraphQL-level failures
 * (parse, validation, limits) keep Apollo's codes; anything else becomes `internal_error`
 * without internals. Failures before GraphQL runs (authentication, body parsing) are answered
 * in the GraphQL response format with the catalogue status.
 */
import { unwrapResolverError } from '@apollo/server/errors';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { GraphQLFormattedError } from 'graphql';
import { StoreUnavailableError } from '../store/registry-port.ts';
import { ApiError, isApiError } from '../errors.ts';

/** The `extensions` of a catalogue error. */
export function apiErrorExtensions(err: ApiError): Record<string, unknown> {
  const extensions: Record<string, unknown> = { code: err.code, http: { status: err.status } };
  if (err.extras.field !== undefined) extensions.field = err.extras.field;
  if (err.extras.errors !== undefined) extensions.errors = err.extras.errors;
  return extensions;
}

/** Apollo's `formatError`: catalogue errors keep their code and status; internals never leak. */
export function formatGraphqlError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  if (isApiError(original)) {
    return { ...formatted, message: original.detail, extensions: apiErrorExtensions(original) };
  }
  // Apollo codes every error it has no code for INTERNAL_SERVER_ERROR; the rest (parse, validation,
  // persisted queries, limits, bad input) keep Apollo's code and message.
  if (formatted.extensions?.code !== 'INTERNAL_SERVER_ERROR') return formatted;
  const internal = original instanceof StoreUnavailableError
    ? new ApiError('service_unavailable', 'the registry store is unavailable; retry later')
    : new ApiError('internal_error', 'an internal error occurred');
  const { locations, path } = formatted;
  return { message: internal.detail, ...(locations ? { locations } : {}), ...(path ? { path } : {}), extensions: apiErrorExtensions(internal) };
}

/**
 * Error handler of the /graphql route: errors thrown before Apollo runs (authentication in the
 * scope's onRequest hook, body parsing) as a GraphQL response with the catalogue status.
 */
export function graphqlRouteErrorHandler(toApiError: (err: FastifyError) => ApiError) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const apiErr = toApiError(err);
    if (apiErr.status >= 500) request.log.error({ err }, 'graphql request failed');
    if (apiErr.extras.retryAfter !== undefined) reply.header('retry-after', String(apiErr.extras.retryAfter));
    return reply
      .code(apiErr.status)
      .type('application/json; charset=utf-8')
      .send({ errors: [{ message: apiErr.detail, extensions: { ...apiErrorExtensions(apiErr), traceId: request.id } }] });
  };
}
