/**
 * The ready-to-send form of an artifact: its stored document serialized by its kind's response
 * schema (the fields the specification lists, in its order, nothing else), without the fields
 * computed per caller (`identity`, `permissions`, `relationships`). Stores keep it beside the
 * document from import on (the `api_json` column, `ReadyArtifact`), so a page of artifacts is answered by
 * splicing stored text and the per-caller fields instead of parsing and serializing every document
 * per request. The serializer is the one Fastify builds from the same schemas.
 */
import { createHash } from 'node:crypto';
import fastJson, { type ObjectSchema } from 'fast-json-stringify';
import { agentSchema, baseArtifactSchema, toolSchema } from '../domain/artifact-schemas.ts';
import { RELATIONSHIP_FORM_VERSION } from './relationship-forms.ts';

const PER_CALLER = new Set(['identity', 'permissions', 'relationships']);

function documentSchema(schema: { properties: Record<string, unknown>; required: readonly string[] }): ObjectSchema {
  return {
    type: 'object',
    required: [...schema.required],
    properties: Object.fromEntries(
      Object.entries(schema.properties).filter(([k]) => !PER_CALLER.has(k)),
    ) as NonNullable<ObjectSchema['properties']>,
  };
}

const schemas = {
  agent: documentSchema(agentSchema),
  tool: documentSchema(toolSchema),
  other: documentSchema(baseArtifactSchema),
};
const serializers = { agent: fastJson(schemas.agent), tool: fastJson(schemas.tool), other: fastJson(schemas.other) };

/**
 * Names the schemas the forms are serialized by, and the shape of the ready relationship forms:
 * stores keep it beside the forms and write every row's again when it changes (a field added to
 * or removed from a response schema, a new RELATIONSHIP_FORM_VERSION).
 */
export const READY_FINGERPRINT = createHash('sha256')
  .update(JSON.stringify({ ...schemas, relationshipForms: RELATIONSHIP_FORM_VERSION }))
  .digest('hex')
  .slice(0, 16);

/** The document as the API shows it to every caller, as JSON text (an object: `{…}`). */
export function apiDocumentJson(kind: string, doc: Record<string, unknown>): string {
  const serialize: (doc: unknown) => string =
    kind === 'agent' ? serializers.agent : kind === 'tool' ? serializers.tool : serializers.other;
  return serialize(doc);
}

/** `apiDocumentJson` of a stored document's text (a document its schema cannot serialize throws). */
export function apiDocumentJsonOf(kind: string, docText: string): string {
  return apiDocumentJson(kind, JSON.parse(docText) as Record<string, unknown>);
}

/** `apiDocumentJsonOf`, or null when the document cannot be serialized (for stores filling old rows). */
export function readyJson(kind: string, docText: string): string | null {
  try {
    return apiDocumentJsonOf(kind, docText);
  } catch {
    return null;
  }
}

/** Told how many ready forms a long fill has written: every 10,000 rows, and once at its end. */
export type ReadyProgress = (message: string) => void;

/** A reporter of a fill's running total for `progress` (silent for a fill that wrote nothing). */
export function readyProgress(
  progress: ReadyProgress | undefined,
  what = 'ready-to-send documents',
): (written: number, done: boolean) => void {
  let reported = 0;
  return (written, done) => {
    if (progress === undefined || written === 0) return;
    if (done) progress(`${what}: ${written.toLocaleString('en-US')} ${written === 1 ? 'row' : 'rows'} written, done`);
    else if (written - reported >= 10_000) {
      reported = written;
      progress(`${what}: ${written.toLocaleString('en-US')} rows written so far`);
    }
  };
}
