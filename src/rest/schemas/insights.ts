/** JSON Schemas of the insight routes: the list's query string, an insight, a page, a subscription. */
import { INSIGHTS_DEFAULT_LIMIT, INSIGHTS_MAX_LIMIT } from '../../insights/list-insights.ts';
import { INSIGHT_KINDS } from '../../store/insight-port.ts';

export const insightListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    kind: {
      type: 'array',
      maxItems: INSIGHT_KINDS.length,
      items: { type: 'string', enum: INSIGHT_KINDS },
      description: 'Only these kinds: the parameter repeated (kind=a&kind=b) or a comma-separated list (kind=a,b)',
    },
    since: {
      type: 'integer',
      minimum: 0,
      maximum: 253402300799,
      description: 'Only insights whose window ends after this time (Unix seconds)',
    },
    limit: {
      type: 'integer',
      minimum: 1,
      description: `Page size (default ${INSIGHTS_DEFAULT_LIMIT}, larger values clamped to ${INSIGHTS_MAX_LIMIT})`,
    },
    cursor: { type: 'string', maxLength: 1024, description: 'The next_cursor of the previous page' },
  },
} as const;

const subjectSchema = {
  type: 'object',
  required: ['type', 'id'],
  properties: {
    type: { type: 'string', enum: ['skill', 'agent', 'tool'] },
    id: { type: 'string', description: 'A skill or agent id, or a tool name' },
    server: { type: ['string', 'null'], description: "A tool's MCP server (tool subjects only)" },
  },
} as const;

const insightSchema = {
  type: 'object',
  required: ['id', 'kind', 'subject', 'workspace_id', 'window', 'payload', 'created_at'],
  properties: {
    id: { type: 'string', description: 'Deterministic: a recomputation of the same insight has the same id' },
    kind: { type: 'string', enum: INSIGHT_KINDS },
    subject: subjectSchema,
    workspace_id: { type: 'string', description: 'The workspace whose telemetry it was computed from' },
    window: {
      type: 'object',
      required: ['start_time_unix_seconds', 'end_time_unix_seconds'],
      properties: {
        start_time_unix_seconds: { type: 'integer' },
        end_time_unix_seconds: { type: 'integer' },
      },
    },
    payload: {
      type: 'object',
      additionalProperties: true,
      description: 'Valid against the schema of its kind (GET /skill/v1/insights/schemas)',
    },
    created_at: { type: 'string', description: 'When it was detected (ISO 8601, UTC)' },
  },
} as const;

export const insightPageSchema = {
  type: 'object',
  required: ['items'],
  properties: {
    items: { type: 'array', items: insightSchema },
    next_cursor: { type: 'string', description: 'Absent on the last page' },
  },
} as const;

const subscriptionProperties = {
  id: { type: 'string' },
  workspace_id: { type: 'string' },
  url: { type: 'string' },
  kinds: { type: 'array', items: { type: 'string', enum: INSIGHT_KINDS }, description: 'Empty: every kind' },
  subjects: { type: 'array', items: subjectSchema, description: 'Empty: every subject' },
  created_by: { type: 'string' },
  created_at: { type: 'string' },
} as const;
const subscriptionRequired = ['id', 'workspace_id', 'url', 'kinds', 'subjects', 'created_by', 'created_at'] as const;

export const subscriptionListSchema = {
  type: 'object',
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      items: { type: 'object', required: subscriptionRequired, properties: subscriptionProperties },
    },
  },
} as const;

export const createdSubscriptionSchema = {
  type: 'object',
  required: [...subscriptionRequired, 'secret'],
  properties: {
    ...subscriptionProperties,
    secret: {
      type: 'string',
      description: 'The signing secret of the deliveries (whsec_…, Standard Webhooks); shown in this answer only',
    },
  },
} as const;
