/**
 * The one error catalogue of the API. Every error any transport sends is an {@link ApiError}
 * with a code from {@link catalogue}; REST renders it as problem+json, GraphQL as
 * `extensions.code` / `extensions.http.status`. Tests assert codes, never sentences.
 */
export const catalogue = {
  invalid_json: { status: 400, title: 'Malformed JSON body' },
  invalid_query: { status: 400, title: 'Invalid query parameter' },
  invalid_request: { status: 400, title: 'Invalid request' },

  alg_mismatch: { status: 401, title: 'Token algorithm does not match its key' },
  alg_not_allowed: { status: 401, title: 'Token algorithm not allowed' },
  audience_mismatch: { status: 401, title: 'Token audience mismatch' },
  invalid_api_key: { status: 401, title: 'Invalid API key' },
  missing_identity: { status: 401, title: 'Token carries no identity' },
  missing_org: { status: 401, title: 'Token carries no organization' },
  missing_user: { status: 401, title: 'Token carries no user' },
  signature_invalid: { status: 401, title: 'Token signature invalid' },
  token_expired: { status: 401, title: 'Token expired' },
  token_malformed: { status: 401, title: 'Token malformed' },
  token_missing: { status: 401, title: 'Bearer token missing' },
  token_not_yet_valid: { status: 401, title: 'Token not yet valid' },
  token_rejected: { status: 401, title: 'Token rejected' },
  token_service_account_unbound: { status: 401, title: 'Service account not bound to an agent' },
  unknown_account: { status: 401, title: 'Unknown account' },
  unknown_key: { status: 401, title: 'Unknown signing key' },
  untrusted_issuer: { status: 401, title: 'Untrusted token issuer' },

  access_denied: { status: 403, title: 'Access denied' },
  account_suspended: { status: 403, title: 'Account suspended' },

  not_found: { status: 404, title: 'Not found' },
  trace_not_found: { status: 404, title: 'Trace not found' },

  name_taken: { status: 409, title: 'Name or id belongs to another server' },
  version_exists: { status: 409, title: 'Version already published' },

  unsupported_content_type: { status: 415, title: 'Unsupported content type' },

  invalid_field: { status: 422, title: 'Invalid field' },
  validation_failed: { status: 422, title: 'Validation failed' },

  rate_limited: { status: 429, title: 'Rate limit exceeded' },

  internal_error: { status: 500, title: 'Internal error' },

  auth_unavailable: { status: 503, title: 'Authentication unavailable' },
  service_overloaded: { status: 503, title: 'Service overloaded' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
  traces_unavailable: { status: 503, title: 'Trace store unavailable' },

  request_timeout: { status: 504, title: 'Request timed out' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof catalogue;

/** One invalid field of a request body, addressed by JSON pointer. */
export interface FieldError {
  field: string;
  detail: string;
}

/** Extra members a problem body may carry besides the five standard ones. */
export interface ProblemExtras {
  field?: string;
  errors?: FieldError[];
  /** Seconds, sent as `Retry-After` by transports that have headers. */
  retryAfter?: number;
}

/** A failure with a catalogue code; `detail` is always safe to show a client. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly extras: ProblemExtras;

  constructor(code: ErrorCode, detail?: string, extras: ProblemExtras = {}) {
    const entry = catalogue[code];
    super(detail ?? entry.title);
    this.name = 'ApiError';
    this.code = code;
    this.status = entry.status;
    this.title = entry.title;
    this.detail = detail ?? entry.title;
    this.extras = extras;
  }
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}

/**
 * The most fields a problem lists (DESIGN §12): a body of a hundred thousand unknown keys would
 * otherwise be answered with several times its size. A full list says "at least".
 */
export const MAX_LISTED_FIELD_ERRORS = 100;

/** 422 for field errors: one -> `invalid_field` with `field`, several -> `validation_failed`. */
export function fieldErrors(errors: FieldError[]): ApiError {
  if (errors.length === 1) {
    const [only] = errors as [FieldError];
    return new ApiError('invalid_field', only.detail, { field: only.field });
  }
  // toFieldErrors lists at most MAX_LISTED_FIELD_ERRORS fields: a full list may stand for more.
  const count = errors.length >= MAX_LISTED_FIELD_ERRORS ? `at least ${errors.length}` : String(errors.length);
  return new ApiError('validation_failed', `${count} fields are invalid`, { errors });
}

/** A cross-field rule: always `validation_failed`, even when only one rule broke. */
export function ruleBroken(field: string, detail: string): ApiError {
  return new ApiError('validation_failed', detail, { errors: [{ field, detail }] });
}

export interface ProblemBody {
  code: ErrorCode;
  title: string;
  detail: string;
  status: number;
  trace_id: string | null;
  field?: string;
  errors?: FieldError[];
}

export function toProblem(err: ApiError, traceId: string | null): ProblemBody {
  const body: ProblemBody = {
    code: err.code,
    title: err.title,
    detail: err.detail,
    status: err.status,
    trace_id: traceId,
  };
  if (err.extras.field !== undefined) body.field = err.extras.field;
  if (err.extras.errors !== undefined) body.errors = err.extras.errors;
  return body;
}
