/**
 * The shape check of an import bundle: Ajv compiles the JSON Schema of bundle/schema.ts, and the
 * first violation becomes a BundleError naming its JSON path and what the value must be.
 */
import { Ajv, type ErrorObject } from 'ajv';
import { BundleError } from './checks.ts';
import { bundleSchema, type RawBundle } from './schema.ts';

/** RFC 3339 date-time (the form every timestamp of the API takes). */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

const ajv = new Ajv({ allErrors: false, verbose: true, allowUnionTypes: true });
ajv.addFormat('timestamp', (v: string) => TIMESTAMP.test(v) && !Number.isNaN(Date.parse(v)));
export const validateShape = ajv.compile<RawBundle>(bundleSchema);

/** Messages of the rules a bare keyword would describe poorly, by the field they guard. */
const FIELD_RULES: Record<string, string> = {
  content_hash_hex: 'must be 64 hex digits (sha256)',
  api_key: 'must be at least 16 characters without dots or spaces',
  version_ordinal: 'must be an integer >= 1',
};

interface SchemaNode {
  type?: string | string[];
  format?: string;
  enum?: readonly string[];
  properties?: Record<string, SchemaNode>;
}

/** What a value of `schema` must be, as the messages say it. */
function expected(schema: SchemaNode | undefined): string {
  if (schema?.enum !== undefined) return `one of ${schema.enum.join(', ')}`;
  if (schema?.format === 'timestamp') return 'an RFC 3339 timestamp';
  const type = [schema?.type ?? []].flat().find((t) => t !== 'null');
  const names: Record<string, string> = {
    string: 'a non-empty string',
    boolean: 'a boolean',
    integer: 'an integer',
    number: 'a finite number',
    object: 'an object',
    array: 'an array',
  };
  return names[type ?? ''] ?? 'a JSON value';
}

/** The first schema violation as a BundleError: `/artifacts/3/kind` is reported as `artifacts[3].kind`. */
export function shapeError(e: ErrorObject): BundleError {
  const parts = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const parent = e.parentSchema as SchemaNode | undefined;
  let schema = parent;
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    parts.push(missing);
    schema = parent?.properties?.[missing];
  }
  const path = parts.reduce((at, p) => (/^\d+$/.test(p) ? `${at}[${p}]` : at === '' ? p : `${at}.${p}`), '') || '$';
  const field = parts.at(-1) ?? '';
  const rule = ['pattern', 'minLength', 'minimum'].includes(e.keyword) ? FIELD_RULES[field] : undefined;
  return new BundleError(path, rule ?? `must be ${expected(schema)}`);
}
