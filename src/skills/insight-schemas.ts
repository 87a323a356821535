/**
 * Operation 4: the JSON Schemas (draft 2020-12) of the insight payloads the service can emit.
 * Static data: the same for every caller; versioned per schema.
 *
 * Version 2 of every kind: an insight is about a skill (`skill_id`) or an agent (`agent_id`),
 * exactly one of the two; the rest of each payload is version 1's. `evaluation_drop` is new in 2.
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
const VERSION = '2';

const window = {
  type: 'object',
  required: ['start_time_unix_seconds', 'end_time_unix_seconds'],
  properties: {
    start_time_unix_seconds: { type: 'integer' },
    end_time_unix_seconds: { type: 'integer' },
  },
  additionalProperties: false,
};

const id = { type: 'string', minLength: 1 };
/** One branch of the subject's oneOf: the payload names this member (declared here too, for Ajv's strict mode). */
const subject = (member: string) => ({ type: 'object', required: [member], properties: { [member]: id } });

function payload(
  name: string,
  title: string,
  required: string[],
  properties: Record<string, unknown>,
): Record<string, unknown> {
  return {
    $schema: DIALECT,
    $id: `${BASE}:${name}:${VERSION}`,
    title,
    type: 'object',
    required: ['kind', 'window', ...required],
    // The subject: a skill or an agent, never both.
    oneOf: [subject('skill_id'), subject('agent_id')],
    properties: {
      kind: { const: name },
      skill_id: id,
      agent_id: id,
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
    version: VERSION,
    title: 'Usage summary',
    description: 'Traces, sessions, active users and tokens of a skill or agent over a window.',
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
    version: VERSION,
    title: 'Tool failure hotspot',
    description: "Tools whose calls fail most often during a skill's or agent's traces.",
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
    version: VERSION,
    title: 'Latency regression',
    description: 'A latency percentile of a skill or agent that rose against the previous period.',
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
    version: VERSION,
    title: 'Cost spike',
    description: 'Spend of a skill or agent that exceeded its baseline, with the models behind it.',
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
    version: VERSION,
    title: 'Token efficiency',
    description: 'Tokens per trace of a skill or agent against its success rate.',
    schema: payload('token_efficiency', 'Token efficiency', ['tokens_per_trace', 'success_rate'], {
      tokens_per_trace: { type: ['number', 'null'], minimum: 0 },
      success_rate: { type: ['number', 'null'], minimum: 0, maximum: 1 },
      previous_tokens_per_trace: { type: ['number', 'null'], minimum: 0 },
    }),
  },
  {
    name: 'evaluation_drop',
    version: VERSION,
    title: 'Evaluation drop',
    description:
      'The mean score of an evaluation (gen_ai.evaluation.name) of a skill or agent that dropped against the previous period.',
    schema: payload(
      'evaluation_drop',
      'Evaluation drop',
      ['evaluation_name', 'current_score', 'previous_score', 'samples'],
      {
        evaluation_name: id,
        current_score: { type: 'number' },
        previous_score: { type: 'number' },
        samples: count,
        previous_samples: count,
      },
    ),
  },
];

export function listInsightSchemas(): { items: readonly InsightSchema[] } {
  return { items: SCHEMAS };
}
