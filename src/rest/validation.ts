/**
 * Request validation with the precedence of DESIGN §7. Fastify would validate the body before
 * the query string and stop at the first part; we declare route schemas for documentation and
 * serialization, and validate here, in order: query string (400 invalid_query), body root
 * (400 invalid_request), body fields (422 invalid_field / validation_failed).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { ApiError, fieldErrors } from '../errors.ts';
import { toFieldErrors } from '../shared/field-errors.ts';

const queryAjv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: false, strict: false });
const bodyAjv = new Ajv({ allErrors: true, useDefaults: false, strict: false });
addFormats.default(bodyAjv);

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A request without a body validates and reaches the handler as `{}` (operations 2 and 3). */
    emptyBodyIsObject?: boolean;
  }
}

interface Validators {
  /** Read `{}` for a missing body. */
  emptyBodyIsObject?: boolean;
  query?: ValidateFunction;
  body?: ValidateFunction;
}

function validatorsFor(route: RouteOptions): Validators {
  const schema = (route.schema ?? {}) as { querystring?: object; body?: object };
  const v: Validators = {};
  if (schema.querystring) v.query = queryAjv.compile(schema.querystring);
  // A body documented per content type (`content`, the OTLP receiver) is read by its route, not validated here.
  if (schema.body && !('content' in schema.body)) v.body = bodyAjv.compile(schema.body);
  if (route.config?.emptyBodyIsObject === true) v.emptyBodyIsObject = true;
  return v;
}

function validateRequest(request: FastifyRequest, v: Validators): void {
  if (v.query && !v.query(request.query)) {
    const [first] = toFieldErrors(v.query.errors ?? []);
    const name = first?.field.replace(/^\//, '') ?? 'query';
    throw new ApiError('invalid_query', `query parameter ${first?.detail.replace(/^\//, '') ?? name}`);
  }
  if (v.body) {
    if (request.body === undefined && v.emptyBodyIsObject === true) request.body = {};
    const body = request.body;
    if (body === undefined) throw new ApiError('invalid_request', 'a JSON object body is required');
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new ApiError('invalid_request', 'the request body must be a JSON object');
    }
    if (!v.body(body)) throw fieldErrors(toFieldErrors(v.body.errors ?? []));
  }
}

/**
 * Replaces Fastify's validation for every route: schemas stay on the routes (OpenAPI,
 * serialization), checks run in a preValidation hook with the project's precedence.
 */
export function installValidation(app: FastifyInstance): void {
  app.setValidatorCompiler(() => () => true);
  app.addHook('onRoute', (route) => {
    const v = validatorsFor(route);
    if (!v.query && !v.body) return;
    const hook = async (request: FastifyRequest) => validateRequest(request, v);
    const existing = route.preValidation;
    route.preValidation =
      existing === undefined ? [hook] : [...(Array.isArray(existing) ? existing : [existing]), hook];
  });
}
