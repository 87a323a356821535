/**
 * The problems of the REST layer as JSON Schemas: the problem body, and the error responses each
 * route declares (they feed both serialization and the OpenAPI document).
 */
import { catalogue, type ErrorCode } from '../../errors.ts';

export const problemSchema = {
  $id: 'Problem',
  type: 'object',
  description: 'RFC 9457-style problem body; `status` equals the HTTP status.',
  required: ['code', 'title', 'detail', 'status'],
  properties: {
    code: { type: 'string', enum: Object.keys(catalogue) },
    title: { type: 'string' },
    detail: { type: 'string' },
    status: { type: 'integer', minimum: 0 },
    trace_id: { type: ['string', 'null'] },
    field: { type: 'string', description: 'JSON pointer of the invalid field (invalid_field)' },
    errors: {
      type: 'array',
      description: 'Every invalid field (validation_failed)',
      items: {
        type: 'object',
        required: ['field', 'detail'],
        properties: { field: { type: 'string' }, detail: { type: 'string' } },
      },
    },
  },
} as const;

const problemRef = { $ref: 'Problem#' } as const;

/** The problems of every operation that takes a JSON body: its query string, media type, JSON and fields. */
export const BODY_PROBLEMS: readonly ErrorCode[] = [
  'invalid_json',
  'invalid_request',
  'invalid_query',
  'unsupported_content_type',
  'invalid_field',
  'validation_failed',
];

/**
 * Error responses for a route, by status, each described with the codes it can carry; `schema` is
 * the body's (default the shared Problem).
 */
export function problemResponses(codes: ErrorCode[], schema: object = problemRef): Record<string, object> {
  const always: ErrorCode[] = [
    // Every authentication failure of DESIGN §6 (all 401 codes of the catalogue), on every operation.
    ...(Object.keys(catalogue) as ErrorCode[]).filter((code) => catalogue[code].status === 401),
    'access_denied',
    'account_suspended',
    'internal_error',
    'auth_unavailable',
    'service_unavailable',
    'service_overloaded',
    'request_timeout',
  ];
  const byStatus = new Map<number, Set<ErrorCode>>();
  for (const code of [...always, ...codes]) {
    const status = catalogue[code].status;
    const set = byStatus.get(status) ?? new Set<ErrorCode>();
    set.add(code);
    byStatus.set(status, set);
  }
  const out: Record<string, object> = {};
  for (const [status, set] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = {
      description: [...set].join(', '),
      content: { 'application/problem+json': { schema } },
    };
  }
  return out;
}
