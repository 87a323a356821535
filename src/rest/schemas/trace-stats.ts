/** The response schema of the trace statistics routes (trace-routes.ts): one envelope, skills and agents alike. */
const nullable = <const S extends object>(schema: S) => ({ anyOf: [schema, { type: 'null' }] }) as const;
const num = { type: ['number', 'null'] } as const;

const dataSchema = {
  type: 'object',
  required: ['request_type'],
  properties: {
    request_type: { type: 'string', enum: ['scalar', 'table', 'time_series'] },
    results: {
      type: 'array',
      items: {
        type: 'object',
        required: ['query_name', 'measure'],
        properties: {
          query_name: { type: 'string' },
          measure: { type: 'string' },
          value: num,
          unit: { type: ['string', 'null'] },
        },
      },
    },
    columns: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'column_type'],
        properties: {
          name: { type: 'string' },
          column_type: { type: 'string', enum: ['group', 'measure'] },
          unit: { type: ['string', 'null'] },
        },
      },
    },
    rows: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          groups: { type: 'object', additionalProperties: true },
          values: { type: 'object', additionalProperties: true },
        },
      },
    },
    series: {
      type: 'array',
      items: {
        type: 'object',
        required: ['query_name', 'measure', 'points'],
        properties: {
          query_name: { type: 'string' },
          measure: { type: 'string' },
          unit: { type: ['string', 'null'] },
          groups: { type: 'object', additionalProperties: true },
          points: {
            type: 'array',
            items: {
              type: 'object',
              required: ['timestamp_unix_seconds'],
              properties: { timestamp_unix_seconds: { type: 'integer' }, value: num },
            },
          },
        },
      },
    },
  },
} as const;

/** The answer of operation 1 and of an agent's trace statistics: data, meta, comparison. */
export const statsAnswerSchema = {
  type: 'object',
  required: ['data', 'meta'],
  properties: {
    data: dataSchema,
    meta: { type: 'object', properties: { warnings: { type: 'array', items: { type: 'string' } } } },
    comparison: nullable({
      type: 'object',
      required: ['start_time_unix_seconds', 'end_time_unix_seconds', 'data'],
      properties: {
        start_time_unix_seconds: { type: 'integer' },
        end_time_unix_seconds: { type: 'integer' },
        data: dataSchema,
      },
    }),
  },
} as const;
