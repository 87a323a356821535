/**
 * Ajv errors as the problem bodies' field errors (DESIGN §7): a JSON pointer per field and a
 * sentence. Shared by REST validation and the GraphQL inputs that reuse the REST schemas.
 */
import type { ErrorObject } from 'ajv';
import { MAX_LISTED_FIELD_ERRORS, type FieldError } from '../errors.ts';

function pointer(e: ErrorObject): string {
  const base = e.instancePath;
  const p = e.params as Record<string, unknown>;
  if (e.keyword === 'required') return `${base}/${String(p.missingProperty)}`;
  if (e.keyword === 'additionalProperties') return `${base}/${String(p.additionalProperty)}`;
  return base === '' ? '/' : base;
}

function describe(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `${String(p.missingProperty)} is required`;
    case 'additionalProperties':
      return `unknown field ${String(p.additionalProperty)}`;
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return e.message ?? 'is invalid';
  }
}

/** One entry per field (Ajv may report several keywords for one pointer), at most MAX_LISTED_FIELD_ERRORS. */
export function toFieldErrors(errors: ErrorObject[]): FieldError[] {
  const seen = new Map<string, FieldError>();
  for (const e of errors) {
    if (e.keyword === 'if' || e.keyword === 'anyOf' || e.keyword === 'oneOf') continue;
    const field = pointer(e);
    if (!seen.has(field)) seen.set(field, { field, detail: `${field} ${describe(e)}` });
    if (seen.size === MAX_LISTED_FIELD_ERRORS) break;
  }
  if (seen.size === 0 && errors.length > 0) {
    const e = errors[0] as ErrorObject;
    seen.set(pointer(e), { field: pointer(e), detail: `${pointer(e)} ${describe(e)}` });
  }
  return [...seen.values()];
}
