/**
 * The query strings and page object of the REST layer as JSON Schemas: limit and offset of a list,
 * the empty query string of an operation without parameters, and the `page` of a list's answer.
 */
export const pageSchema = {
  type: 'object',
  required: ['limit', 'offset', 'total'],
  properties: {
    limit: { type: 'integer' },
    offset: { type: 'integer' },
    total: { type: 'integer' },
    next_cursor: { type: 'string' },
  },
} as const;

/**
 * A start position: any offset a store can represent (beyond the data it gives an empty page); a
 * larger number (one JSON or a query string cannot carry exactly) is refused as invalid input.
 */
export const offsetSchema = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;

/** The query string of an operation that defines no parameter: any parameter is 400 invalid_query. */
export const noQuery = { type: 'object', additionalProperties: false, properties: {} } as const;

export const limitOffsetQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: {
      type: 'integer',
      minimum: 0,
      description: 'Page size (default 50, larger values clamped to 200; 0 returns only the total)',
    },
    offset: { ...offsetSchema, description: 'Start position (default 0)' },
  },
} as const;
