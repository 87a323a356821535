/**
 * GraphQL error mapping (DESIGN §7): an error of the catalogue keeps its code in
 * `extensions.code` and its HTTP status in `extensions.http.status`; GraphQL-level failures
 * (parse, validation, limits, persisted queries) keep Apollo's codes, with the HTTP status they
 * set; anything else becomes `internal_error` without internals. No stack-overflow text ever
 * reaches a client. Failures before GraphQL runs (authentication, body parsing) are answered in
 * the GraphQL response format with the catalogue status.
 */
import { ApolloServerErrorCode, unwrapResolverError } from '@apollo/server/errors';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { StoreUnavailableError } from '../store/registry-port.ts';
import { ApiError, isApiError } from '../errors.ts';

/** The `extensions` of a catalogue error. */
function apiErrorExtensions(err: ApiError): Record<string, unknown> {
  const extensions: Record<string, unknown> = { code: err.code, http: { status: err.status } };
  if (err.extras.field !== undefined) extensions.field = err.extras.field;
  if (err.extras.errors !== undefined) extensions.errors = err.extras.errors;
  return extensions;
}

/** The HTTP status a GraphQL error asked for (Apollo takes it out of the formatted extensions). */
function httpStatusOf(error: unknown): number | undefined {
  const http = error instanceof GraphQLError ? (error.extensions.http as { status?: unknown } | undefined) : undefined;
  return typeof http?.status === 'number' ? http.status : undefined;
}

/** True when `error` or an error it wraps is a stack overflow. */
function isStackOverflow(error: unknown): boolean {
  for (let e = error, n = 0; e instanceof Error && n < 5; e = (e as { originalError?: unknown }).originalError, n++) {
    if (e.message.includes('Maximum call stack size exceeded')) return true;
  }
  return false;
}

/**
 * Errors Apollo raises itself without a code (an APQ hash that does not match its query, an
 * unsupported APQ version): request errors with a 4xx status, not internal ones.
 */
function isCodelessRequestError(error: unknown): error is GraphQLError {
  const status = httpStatusOf(error);
  return (
    error instanceof GraphQLError &&
    error.extensions.code === undefined &&
    error.originalError == null &&
    status !== undefined &&
    status < 500
  );
}

/**
 * The HTTP status a GraphQL error stands for: its catalogue status, the status a GraphQL-level
 * error set (400 when none), 503 when the registry store is down, else 500.
 */
export function graphqlErrorStatus(error: unknown): number {
  const original = unwrapResolverError(error);
  if (isApiError(original)) return original.status;
  const coded =
    error instanceof GraphQLError &&
    error.extensions.code !== undefined &&
    error.extensions.code !== ApolloServerErrorCode.INTERNAL_SERVER_ERROR;
  if (coded || isCodelessRequestError(error)) return httpStatusOf(error) ?? 400;
  return original instanceof StoreUnavailableError ? 503 : 500;
}

/** Apollo's `formatError`: catalogue errors keep their code and status; internals never leak. */
export function formatGraphqlError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  if (isApiError(original)) {
    return { ...formatted, message: original.detail, extensions: apiErrorExtensions(original) };
  }
  const status = httpStatusOf(error);
  const http = status === undefined ? {} : { http: { status } };
  if (isCodelessRequestError(error)) {
    return { ...formatted, extensions: { ...formatted.extensions, code: ApolloServerErrorCode.BAD_REQUEST, ...http } };
  }
  // Apollo codes every error it has no code for INTERNAL_SERVER_ERROR; the rest (parse, validation,
  // persisted queries, limits, bad input) keep Apollo's code and message.
  if (formatted.extensions?.code !== ApolloServerErrorCode.INTERNAL_SERVER_ERROR) {
    const message = isStackOverflow(error) ? 'the document is nested too deeply to be processed' : formatted.message;
    return { ...formatted, message, extensions: { ...formatted.extensions, ...http } };
  }
  const internal =
    original instanceof StoreUnavailableError
      ? new ApiError('service_unavailable', 'the registry store is unavailable; retry later')
      : new ApiError('internal_error', 'an internal error occurred');
  const { locations, path } = formatted;
  return {
    message: internal.detail,
    ...(locations ? { locations } : {}),
    ...(path ? { path } : {}),
    extensions: apiErrorExtensions(internal),
  };
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
      .send({
        errors: [{ message: apiErr.detail, extensions: { ...apiErrorExtensions(apiErr), traceId: request.id } }],
      });
  };
}
