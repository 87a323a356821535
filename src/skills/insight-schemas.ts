/**
 * Operation 4: the JSON Schemas (draft 2020-12) of the insight payloads the service can emit.
 * Static data: the same for every caller; versioned per schema.
 */

export interface InsightSchema {
  name: string;
  version: string;
  title: string;
  description: string;
  schema: Record<string, unknown>;
}

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';
const BASE = 'urn:gateway:insights';

const window = {
  type: 'object',
  required: ['start_time_unix_seconds', 'end_time_unix_seconds'],
  properties: {
    start_time_unix_seconds: { type: 'integer' },
    end_time_unix_seconds: { type: 'integer' },
  },
  additionalProperties: false,
};

function payload(
  name: string,
  title: string,
  required: string[],
  properties: Record<string, unknown>,
): Record<string, unknown> {
  return {
    $schema: DIALECT,
    $id: `${BASE}:${name}:1`,
    title,
    type: 'object',
    required: ['kind', 'skill_id', 'window', ...required],
    properties: {
      kind: { const: name },
      skill_id: { type: 'string', minLength: 1 },
      window: { $ref: '#/$defs/window' },
      ...properties,
    },
    additionalProperties: false,
    $defs: { window },
  };
}

const ratio = { type: 'number', minimum: 0, maximum: 1 };
const count = { type: 'integer', minimum: 0 };

const SCHEMAS: readonly InsightSchema[] = [
  {
    name: 'usage_summary',
    version: '1',
    title: 'Usage summary',
    description: 'Traces, sessions, active users and tokens of a skill over a window.',
    schema: payload('usage_summary', 'Usage summary', ['traces', 'sessions', 'active_users', 'tokens'], {
      traces: count,
      sessions: count,
      active_users: count,
      tokens: count,
      cost_usd: { type: ['number', 'null'], minimum: 0 },
    }),
  },
  {
    name: 'tool_failure_hotspot',
    version: '1',
    title: 'Tool failure hotspot',
    description: "Tools whose calls fail most often during a skill's traces.",
    schema: payload('tool_failure_hotspot', 'Tool failure hotspot', ['tools'], {
      tools: {
        type: 'array',
        items: {
          type: 'object',
          required: ['tool', 'calls', 'errors', 'error_rate'],
          properties: {
            tool: { type: 'string' },
            mcp: { type: ['string', 'null'] },
            calls: count,
            errors: count,
            error_rate: ratio,
          },
          additionalProperties: false,
        },
      },
    }),
  },
  {
    name: 'latency_regression',
    version: '1',
    title: 'Latency regression',
    description: 'A latency percentile of a skill that rose against the previous period.',
    schema: payload(
      'latency_regression',
      'Latency regression',
      ['percentile', 'current_ms', 'previous_ms', 'change_ratio'],
      {
        percentile: { enum: ['p50', 'p90', 'p99'] },
        current_ms: { type: 'number', minimum: 0 },
        previous_ms: { type: 'number', minimum: 0 },
        change_ratio: { type: 'number' },
        skill_version: { type: ['integer', 'null'], minimum: 1 },
      },
    ),
  },
  {
    name: 'cost_spike',
    version: '1',
    title: 'Cost spike',
    description: 'Spend of a skill that exceeded its baseline, with the models behind it.',
    schema: payload('cost_spike', 'Cost spike', ['cost_usd', 'baseline_usd'], {
      cost_usd: { type: 'number', minimum: 0 },
      baseline_usd: { type: 'number', minimum: 0 },
      by_model: {
        type: 'array',
        items: {
          type: 'object',
          required: ['model', 'cost_usd'],
          properties: { model: { type: 'string' }, cost_usd: { type: 'number', minimum: 0 } },
          additionalProperties: false,
        },
      },
    }),
  },
  {
    name: 'token_efficiency',
    version: '1',
    title: 'Token efficiency',
    description: 'Tokens per trace of a skill against its success rate.',
    schema: payload('token_efficiency', 'Token efficiency', ['tokens_per_trace', 'success_rate'], {
      tokens_per_trace: { type: ['number', 'null'], minimum: 0 },
      success_rate: { type: ['number', 'null'], minimum: 0, maximum: 1 },
      previous_tokens_per_trace: { type: ['number', 'null'], minimum: 0 },
    }),
  },
];

export function listInsightSchemas(): { items: readonly InsightSchema[] } {
  return { items: SCHEMAS };
}
