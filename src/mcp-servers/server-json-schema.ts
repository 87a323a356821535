/**
 * The `server.json` document of the MCP Registry as a JSON Schema, written from the published
 * specification: `docs/reference/server-json/server.schema.json` of modelcontextprotocol/registry,
 * released 2025-12-11 (`$id` https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json),
 * which is generated from `docs/reference/api/openapi.yaml` (`ServerDetail`, API version 2025-12-01).
 * Inline (no `$ref`): it is a route's body schema, which feeds validation and the OpenAPI document.
 * Descriptions are shortened; constraints are the specification's.
 */

/** The `$schema` URLs whose documents this schema validates (later ones only add optional fields). */
export const SERVER_SCHEMA_VERSIONS = ['2025-09-29', '2025-10-11', '2025-10-17', '2025-12-11'] as const;
export const schemaUrlOf = (version: string) =>
  `https://static.modelcontextprotocol.io/schemas/${version}/server.schema.json`;

const str = { type: 'string' } as const;
const uri = { type: 'string', format: 'uri' } as const;
/** A remote or package transport URL (2025-12-11: http or https, no whitespace; `{variables}` allowed inside). */
const transportUrl = { type: 'string', pattern: '^https?://[^\\s]+$' } as const;

const input = {
  type: 'object',
  properties: {
    description: str,
    isRequired: { type: 'boolean' },
    format: { type: 'string', enum: ['string', 'number', 'boolean', 'filepath'] },
    value: str,
    isSecret: { type: 'boolean' },
    default: str,
    placeholder: str,
    choices: { type: 'array', items: str },
  },
} as const;

/** Input with `variables` (a map of name to Input): InputWithVariables. */
const inputWithVariables = {
  allOf: [input, { type: 'object', properties: { variables: { type: 'object', additionalProperties: input } } }],
} as const;

const keyValueInput = {
  allOf: [inputWithVariables, { type: 'object', required: ['name'], properties: { name: str } }],
} as const;

const positionalArgument = {
  allOf: [
    inputWithVariables,
    {
      type: 'object',
      required: ['type'],
      properties: { type: { type: 'string', enum: ['positional'] }, valueHint: str, isRepeated: { type: 'boolean' } },
      // Each branch names its property's type too (the same as above), so that documentation linters see it defined.
      anyOf: [
        { required: ['valueHint'], properties: { valueHint: str } },
        { required: ['value'], properties: { value: str } },
      ],
    },
  ],
} as const;

const namedArgument = {
  allOf: [
    inputWithVariables,
    {
      type: 'object',
      required: ['type', 'name'],
      properties: { type: { type: 'string', enum: ['named'] }, name: str, isRepeated: { type: 'boolean' } },
    },
  ],
} as const;

const argument = { anyOf: [positionalArgument, namedArgument] } as const;

const headers = { type: 'array', items: keyValueInput } as const;
const stdioTransport = {
  type: 'object',
  required: ['type'],
  properties: { type: { type: 'string', enum: ['stdio'] } },
} as const;
const streamableHttpTransport = {
  type: 'object',
  required: ['type', 'url'],
  properties: { type: { type: 'string', enum: ['streamable-http'] }, url: transportUrl, headers },
} as const;
const sseTransport = {
  type: 'object',
  required: ['type', 'url'],
  properties: { type: { type: 'string', enum: ['sse'] }, url: transportUrl, headers },
} as const;

const packageSchema = {
  type: 'object',
  required: ['registryType', 'identifier', 'transport'],
  properties: {
    registryType: { type: 'string', description: 'npm, pypi, oci, nuget, mcpb, …' },
    registryBaseUrl: uri,
    identifier: str,
    version: { type: 'string', minLength: 1, not: { const: 'latest' } },
    fileSha256: { type: 'string', pattern: '^[a-f0-9]{64}$' },
    runtimeHint: str,
    transport: { anyOf: [stdioTransport, streamableHttpTransport, sseTransport] },
    runtimeArguments: { type: 'array', items: argument },
    packageArguments: { type: 'array', items: argument },
    environmentVariables: { type: 'array', items: keyValueInput },
  },
} as const;

const remoteTransport = {
  allOf: [
    { anyOf: [streamableHttpTransport, sseTransport] },
    { type: 'object', properties: { variables: { type: 'object', additionalProperties: input } } },
  ],
} as const;

const icon = {
  type: 'object',
  required: ['src'],
  properties: {
    src: { type: 'string', format: 'uri', maxLength: 255 },
    mimeType: { type: 'string', enum: ['image/png', 'image/jpeg', 'image/jpg', 'image/svg+xml', 'image/webp'] },
    sizes: { type: 'array', items: { type: 'string', pattern: '^(\\d+x\\d+|any)$' } },
    theme: { type: 'string', enum: ['light', 'dark'] },
  },
} as const;

/** ServerDetail: what `POST /v0.1/publish` takes and every answer's `server` is. */
export const serverJsonSchema = {
  type: 'object',
  description: 'server.json of the MCP Registry (server.schema.json 2025-12-11); `$schema` is required on publish',
  required: ['name', 'description', 'version'],
  properties: {
    $schema: uri,
    name: { type: 'string', minLength: 3, maxLength: 200, pattern: '^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$' },
    description: { type: 'string', minLength: 1, maxLength: 100 },
    title: { type: 'string', minLength: 1, maxLength: 100 },
    repository: {
      type: 'object',
      required: ['url', 'source'],
      properties: { url: uri, source: str, id: str, subfolder: str },
    },
    version: { type: 'string', maxLength: 255 },
    websiteUrl: uri,
    icons: { type: 'array', items: icon },
    packages: { type: 'array', items: packageSchema },
    remotes: { type: 'array', items: remoteTransport },
    _meta: {
      type: 'object',
      properties: {
        'io.modelcontextprotocol.registry/publisher-provided': { type: 'object', additionalProperties: true },
      },
    },
  },
} as const;
