/**
 * The `server.json` document of an MCP server as a JSON Schema (draft-07, for Ajv), written for
 * this project from the MCP Registry's published schema, version 2025-12-11
 * (https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json; its source is
 * `docs/reference/server-json/server.schema.json` of github.com/modelcontextprotocol/registry,
 * with `docs/reference/server-json/CHANGELOG.md` naming what each version changed). Bundles
 * (bundle/parse-mcp-servers.ts) check every `mcp_servers[].server` against it and store the
 * document unchanged. Fields it does not name are allowed, as in the published schema.
 */

const string = { type: 'string' } as const;
const boolean = { type: 'boolean' } as const;
const uri = { type: 'string', format: 'uri' } as const;
const ref = <const T extends string>(name: T) => ({ $ref: `#/definitions/${name}` }) as const;
const listOf = <const T>(items: T) => ({ type: 'array', items }) as const;

/** The `$schema` URI of the version this schema follows. */
export const SERVER_JSON_SCHEMA_URI = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';

/** A transport URL: http(s), no white space (2025-12-11; template variables inside the URL are allowed). */
const transportUrl = { type: 'string', pattern: '^https?://[^\\s]+$' } as const;

export const serverJsonSchema = {
  title: 'server.json of an MCP server (MCP Registry server.schema.json 2025-12-11)',
  description:
    'Written from the MCP Registry server.schema.json 2025-12-11 ' +
    '(https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json; source ' +
    'github.com/modelcontextprotocol/registry docs/reference/server-json/server.schema.json).',
  $ref: '#/definitions/ServerDetail',
  definitions: {
    /** A value a client asks for or fills in (arguments, environment variables, headers, URL variables). */
    Input: {
      type: 'object',
      properties: {
        description: string,
        isRequired: boolean,
        format: { type: 'string', enum: ['string', 'number', 'boolean', 'filepath'] },
        value: string,
        isSecret: boolean,
        default: string,
        placeholder: string,
        choices: listOf(string),
      },
    },
    InputWithVariables: {
      allOf: [
        ref('Input'),
        { type: 'object', properties: { variables: { type: 'object', additionalProperties: ref('Input') } } },
      ],
    },
    PositionalArgument: {
      allOf: [
        ref('InputWithVariables'),
        {
          type: 'object',
          required: ['type'],
          properties: { type: { type: 'string', enum: ['positional'] }, valueHint: string, isRepeated: boolean },
          anyOf: [{ required: ['valueHint'] }, { required: ['value'] }],
        },
      ],
    },
    NamedArgument: {
      allOf: [
        ref('InputWithVariables'),
        {
          type: 'object',
          required: ['type', 'name'],
          properties: { type: { type: 'string', enum: ['named'] }, name: string, isRepeated: boolean },
        },
      ],
    },
    Argument: { anyOf: [ref('PositionalArgument'), ref('NamedArgument')] },
    /** A header or an environment variable. */
    KeyValueInput: {
      allOf: [ref('InputWithVariables'), { type: 'object', required: ['name'], properties: { name: string } }],
    },
    StdioTransport: {
      type: 'object',
      required: ['type'],
      properties: { type: { type: 'string', enum: ['stdio'] } },
    },
    StreamableHttpTransport: {
      type: 'object',
      required: ['type', 'url'],
      properties: {
        type: { type: 'string', enum: ['streamable-http'] },
        url: transportUrl,
        headers: listOf(ref('KeyValueInput')),
      },
    },
    SseTransport: {
      type: 'object',
      required: ['type', 'url'],
      properties: { type: { type: 'string', enum: ['sse'] }, url: transportUrl, headers: listOf(ref('KeyValueInput')) },
    },
    /** How a client talks to a package it runs. */
    LocalTransport: { anyOf: [ref('StdioTransport'), ref('StreamableHttpTransport'), ref('SseTransport')] },
    /** A hosted endpoint, whose URL may name `variables` in {curly_braces}. */
    RemoteTransport: {
      allOf: [
        { anyOf: [ref('StreamableHttpTransport'), ref('SseTransport')] },
        { type: 'object', properties: { variables: { type: 'object', additionalProperties: ref('Input') } } },
      ],
    },
    Package: {
      type: 'object',
      required: ['registryType', 'identifier', 'transport'],
      properties: {
        registryType: string,
        registryBaseUrl: uri,
        identifier: string,
        version: { type: 'string', minLength: 1, maxLength: 255, not: { const: 'latest' } },
        fileSha256: { type: 'string', pattern: '^[a-f0-9]{64}$' },
        runtimeHint: string,
        transport: ref('LocalTransport'),
        runtimeArguments: listOf(ref('Argument')),
        packageArguments: listOf(ref('Argument')),
        environmentVariables: listOf(ref('KeyValueInput')),
      },
    },
    Repository: {
      type: 'object',
      required: ['url', 'source'],
      properties: { url: uri, source: string, id: string, subfolder: string },
    },
    Icon: {
      type: 'object',
      required: ['src'],
      properties: {
        src: { type: 'string', format: 'uri', maxLength: 255 },
        mimeType: { type: 'string', enum: ['image/png', 'image/jpeg', 'image/jpg', 'image/svg+xml', 'image/webp'] },
        sizes: listOf({ type: 'string', pattern: '^(\\d+x\\d+|any)$' }),
        theme: { type: 'string', enum: ['light', 'dark'] },
      },
    },
    ServerDetail: {
      type: 'object',
      required: ['name', 'description', 'version'],
      properties: {
        $schema: uri,
        name: { type: 'string', minLength: 3, maxLength: 200, pattern: '^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$' },
        title: { type: 'string', minLength: 1, maxLength: 100 },
        description: { type: 'string', minLength: 1, maxLength: 100 },
        version: { type: 'string', maxLength: 255 },
        websiteUrl: uri,
        repository: ref('Repository'),
        icons: listOf(ref('Icon')),
        packages: listOf(ref('Package')),
        remotes: listOf(ref('RemoteTransport')),
        _meta: {
          type: 'object',
          properties: { 'io.modelcontextprotocol.registry/publisher-provided': { type: 'object' } },
        },
      },
    },
  },
} as const;
