/**
 * The error table of the specification (gateway-http-api.md, "Error codes"), copied here so that
 * tests compare answers with the specification and not with the project's own catalogue.
 */
/** The specification's table: status -> codes. */
const SPEC: Record<number, string[]> = {
  400: ['invalid_json', 'invalid_query', 'invalid_request'],
  401: [
    'alg_mismatch',
    'alg_not_allowed',
    'audience_mismatch',
    'invalid_api_key',
    'missing_identity',
    'missing_org',
    'missing_user',
    'signature_invalid',
    'token_expired',
    'token_malformed',
    'token_missing',
    'token_not_yet_valid',
    'token_rejected',
    'token_service_account_unbound',
    'unknown_account',
    'unknown_key',
    'untrusted_issuer',
  ],
  403: ['access_denied', 'account_suspended'],
  404: ['not_found', 'trace_not_found'],
  415: ['unsupported_content_type'],
  422: ['invalid_field', 'validation_failed'],
  500: ['internal_error'],
  503: ['auth_unavailable', 'service_overloaded', 'service_unavailable', 'traces_unavailable'],
  504: ['request_timeout'],
};
export const SPEC_STATUS = new Map(
  Object.entries(SPEC).flatMap(([status, codes]) => codes.map((c) => [c, Number(status)])),
);
/** Codes the specification names without a status, with the status DESIGN §7 gives them. */
export const DESIGN_ONLY = new Map([['rate_limited', 429]]);
/**
 * Codes of the MCP Registry API (its publish answers 409 for a version or a name already taken),
 * which the gateway's specification does not cover.
 */
export const MCP_REGISTRY_ONLY = new Map([
  ['name_taken', 409],
  ['version_exists', 409],
]);
