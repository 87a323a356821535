/**
 * Trace routes: the OTLP/HTTP receiver (`POST /v1/traces`, protobuf or JSON, optionally gzip)
 * and operation 1 (`POST /skill/v1/skills/:skill_id/traces/stats/query`). Malformed OTLP payloads
 * get 400 with an OTLP Status body in the request's encoding; a 200 is sent only after the
 * spans are stored.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { queryTraceStats } from '../skills/trace-stats.ts';
import { ingestSpans } from '../traces/ingest.ts';
import {
  OtlpDecodeError, decodeJson, decodeProtobuf, encodeResponse, encodeStatus, gunzipIfNeeded,
} from '../traces/otlp-decode.ts';
import { traceStatsRequestSchema, type TraceStatsRequest } from '../traces/stats-request.ts';
import { problemResponses } from './schemas/common.ts';

const PROTOBUF = 'application/x-protobuf';
const nullable = (schema: object) => ({ anyOf: [schema, { type: 'null' }] });
const num = { type: ['number', 'null'] } as const;

const dataSchema = {
  type: 'object',
  required: ['request_type'],
  properties: {
    request_type: { type: 'string', enum: ['scalar', 'table', 'time_series'] },
    results: {
      type: 'array',
      items: { type: 'object', required: ['query_name', 'measure'], properties: { query_name: { type: 'string' }, measure: { type: 'string' }, value: num, unit: { type: ['string', 'null'] } } },
    },
    columns: {
      type: 'array',
      items: { type: 'object', required: ['name', 'column_type'], properties: { name: { type: 'string' }, column_type: { type: 'string', enum: ['group', 'measure'] }, unit: { type: ['string', 'null'] } } },
    },
    rows: { type: 'array', items: { type: 'object', properties: { groups: { type: 'object', additionalProperties: true }, values: { type: 'object', additionalProperties: true } } } },
    series: {
      type: 'array',
      items: {
        type: 'object',
        required: ['query_name', 'measure', 'points'],
        properties: {
          query_name: { type: 'string' }, measure: { type: 'string' }, unit: { type: ['string', 'null'] },
          groups: { type: 'object', additionalProperties: true },
          points: { type: 'array', items: { type: 'object', required: ['timestamp_unix_seconds'], properties: { timestamp_unix_seconds: { type: 'integer' }, value: num } } },
        },
      },
    },
  },
} as const;

const envelopeSchema = {
  type: 'object',
  required: ['data', 'meta'],
  properties: {
    data: dataSchema,
    meta: { type: 'object', properties: { warnings: { type: 'array', items: { type: 'string' } } } },
    comparison: nullable({
      type: 'object',
      required: ['start_time_unix_seconds', 'end_time_unix_seconds', 'data'],
      properties: { start_time_unix_seconds: { type: 'integer' }, end_time_unix_seconds: { type: 'integer' }, data: dataSchema },
    }),
  },
} as const;

function isProtobuf(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() === PROTOBUF;
}

async function receiveTraces(request: FastifyRequest, reply: FastifyReply) {
  const proto = isProtobuf(request);
  const contentType = proto ? PROTOBUF : 'application/json';
  let spans;
  try {
    const encoding = request.headers['content-encoding']?.toLowerCase();
    const body = gunzipIfNeeded((request.body as Buffer | undefined) ?? Buffer.alloc(0), encoding);
    spans = proto ? decodeProtobuf(body) : decodeJson(body);
  } catch (err) {
    if (!(err instanceof OtlpDecodeError)) throw err;
    // google.rpc.Code INVALID_ARGUMENT = 3
    return reply.code(400).type(contentType).send(encodeStatus(3, err.message, proto));
  }
  const result = await ingestSpans(request.ctx, request.ctx.services.traces, spans);
  request.ctx.services.metrics?.spansIngested.inc({ outcome: 'stored' }, result.accepted);
  if (result.rejected > 0) request.ctx.services.metrics?.spansIngested.inc({ outcome: 'rejected' }, result.rejected);
  return reply.code(200).type(contentType).send(encodeResponse(result.rejected, result.errorMessage, proto));
}

export function registerTraceRoutes(api: FastifyInstance): void {
  void api.register(async (otlp) => {
    otlp.removeContentTypeParser('application/json');
    otlp.addContentTypeParser([PROTOBUF, 'application/json'], { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    otlp.post('/v1/traces', {
      schema: {
        operationId: 'exportTraces',
        tags: ['traces'],
        summary: 'OTLP/HTTP trace receiver (protobuf or JSON, optional gzip)',
        description: 'Answers an ExportTraceServiceResponse, with partial_success when spans were rejected.',
        response: { ...problemResponses(['unsupported_content_type', 'invalid_request']) },
      },
    }, receiveTraces);
  });

  api.post('/skill/v1/skills/:skill_id/traces/stats/query', {
    schema: {
      operationId: 'queryTraceStats',
      tags: ['skills'],
      summary: 'Trace statistics of a skill',
      params: { type: 'object', required: ['skill_id'], properties: { skill_id: { type: 'string' } } },
      querystring: { type: 'object', additionalProperties: false, properties: { version_ordinal: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } } },
      body: traceStatsRequestSchema,
      response: {
        200: envelopeSchema,
        ...problemResponses(['invalid_json', 'invalid_request', 'invalid_query', 'unsupported_content_type', 'invalid_field',
          'validation_failed', 'not_found', 'traces_unavailable', 'missing_org', 'untrusted_issuer']),
      },
    },
  }, async (request) => {
    const { skill_id } = request.params as { skill_id: string };
    const { version_ordinal } = request.query as { version_ordinal?: number };
    return queryTraceStats(request.ctx, request.ctx.services.traces, skill_id, version_ordinal, request.body as TraceStatsRequest);
  });
}
