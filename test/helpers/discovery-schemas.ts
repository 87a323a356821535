/**
 * Ajv validators of the discovery documents, from the JSON Schemas written from the published
 * specifications (test/fixtures/schemas/): the A2A v1.0.1 AgentCard and the AI Catalog. Each
 * returns Ajv's errors, `null` when the document is valid (strict, except that `oneOf` branches may
 * require members declared beside them: a catalog entry's `url` or `data`).
 */
import fs from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const dir = path.join(import.meta.dirname, '../fixtures/schemas');
const ajv = new Ajv2020.default({ strict: true, strictRequired: false, allErrors: true });
addFormats.default(ajv);

function validator(file: string) {
  const validate = ajv.compile(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as object);
  return (doc: unknown) => (validate(doc) ? null : validate.errors);
}

export const agentCardErrors = validator('a2a-agent-card.schema.json');
export const aiCatalogErrors = validator('ai-catalog.schema.json');
