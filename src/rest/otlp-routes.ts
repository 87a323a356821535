/**
 * The OTLP/HTTP receiver, `POST /v1/traces`, `/v1/logs` and `/v1/metrics` (protobuf or JSON,
 * optionally gzip; logs carry harness events, mapped to spans by otlp/logs/mapping.ts, and GenAI
 * evaluation events (otlp/logs/evaluations.ts); metric
 * data points are counted, not stored), bounded
 * before any work (DESIGN §12): the caller's right to write telemetry is checked before the body
 * is read; gzip is inflated as a stream and cut at OTLP_MAX_DECOMPRESSED_BYTES (also the largest
 * body read from the wire); decoding runs on worker threads (otlp/decode-pool.ts) and stops past
 * OTLP_MAX_SPANS. A malformed or over-bound payload gets 400 with an OTLP Status body in the
 * request's encoding; a 200 is sent only after the spans are stored.
 */
import { Transform, pipeline, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Bounds } from '../config.ts';
import type { Metrics } from '../observability/metrics.ts';
import { assertCanIngest, ingestDecoded } from '../otlp/ingest.ts';
import { createDecodePool } from '../otlp/decode-pool.ts';
import { OtlpDecodeError, encodeResponse, encodeStatus } from '../otlp/traces/decode.ts';
import { problemResponses } from './schemas/problems.ts';
import { ApiError } from '../errors.ts';
import { refuseSpentIngestQuota, spendIngestQuotas } from './rate-limit.ts';

const PROTOBUF = 'application/x-protobuf';
/** google.rpc.Code INVALID_ARGUMENT. */
const INVALID_ARGUMENT = 3;

function isProtobuf(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() === PROTOBUF;
}

/** A payload the receiver refuses (400 with an OTLP Status), as opposed to a caller or server problem. */
class PayloadError extends Error {
  readonly statusCode = 400;
}

/**
 * The request body inflated as a stream, failing once the output passes `limit`: a small gzip body
 * that inflates to gigabytes costs at most `limit` bytes of work. `receivedEncodedLength` tells
 * Fastify the bytes read from the wire (it checks them against content-length).
 */
function gunzipped(payload: Readable, limit: number): Readable {
  let out = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      out += chunk.length;
      if (out > limit) {
        done(new PayloadError(`the body inflates to more than ${limit} bytes`));
        return;
      }
      done(null, chunk);
    },
  }) as Transform & { receivedEncodedLength: number };
  counted.receivedEncodedLength = 0;
  payload.on('data', (chunk: Buffer) => {
    counted.receivedEncodedLength += chunk.length;
  });
  const gunzip = zlib.createGunzip();
  return pipeline(payload, gunzip, counted, () => undefined);
}

/** The OTLP Status message for a payload problem, or null for any other error. */
function payloadProblem(err: FastifyError | Error): string | null {
  if (err instanceof PayloadError || err instanceof OtlpDecodeError) return err.message;
  const raw = (err as { code?: unknown }).code;
  const code = typeof raw === 'string' ? raw : '';
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return 'the body is larger than the receiver accepts';
  // zlib's errors: Z_DATA_ERROR, Z_BUF_ERROR (a truncated stream) and the like.
  if (code.startsWith('Z_')) return 'the gzip body cannot be decompressed';
  if (code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') return 'content-length does not match the body';
  return null;
}

/** The OTLP bodies, documented per content type (the receiver reads them itself: no JSON validation). */
const binary = { type: 'string', format: 'binary' } as const;
const otlpBody = (request: string) => ({
  description: `${request} (opentelemetry-proto), optionally gzip-encoded`,
  content: {
    [PROTOBUF]: { schema: binary },
    'application/json': { schema: { type: 'object' } },
  },
});
const exportResponseSchema = {
  type: 'object',
  properties: {
    partialSuccess: {
      type: 'object',
      properties: {
        rejectedSpans: { type: ['integer', 'string'] },
        rejectedLogRecords: { type: ['integer', 'string'] },
        rejectedDataPoints: { type: ['integer', 'string'] },
        errorMessage: { type: 'string' },
      },
    },
  },
} as const;
const statusSchema = {
  type: 'object',
  required: ['code', 'message'],
  properties: { code: { type: 'integer' }, message: { type: 'string' } },
} as const;
function otlpAnswer(description: string, json: object, orProblem = false): object {
  return {
    description,
    content: {
      [PROTOBUF]: { schema: binary },
      'application/json': { schema: json },
      ...(orProblem ? { 'application/problem+json': { schema: { $ref: 'Problem#' } } } : {}),
    },
  };
}

/** What each route receives and answers; logs are harness events mapped to spans (otlp/logs/mapping.ts). */
const SIGNALS = {
  traces: {
    request: 'ExportTraceServiceRequest',
    response: 'ExportTraceServiceResponse',
    summary: 'OTLP/HTTP trace receiver (protobuf or JSON, optional gzip)',
    note: '',
  },
  logs: {
    request: 'ExportLogsServiceRequest',
    response: 'ExportLogsServiceResponse',
    summary:
      'OTLP/HTTP logs receiver: harness events (Claude Code, Codex) become spans, GenAI evaluation events evaluations',
    note: ' Log records that are neither a harness event nor a gen_ai.evaluation.result event of docs/send-telemetry.md are accepted and counted, not stored.',
  },
  metrics: {
    request: 'ExportMetricsServiceRequest',
    response: 'ExportMetricsServiceResponse',
    summary: 'OTLP/HTTP metrics receiver: Claude Code counters stored as harness measures, the rest counted',
    note: ' Delta sums of the harness metrics of docs/send-telemetry.md are stored (lines of code, commits, pull requests, active time); other data points are counted on /metrics (gateway_otlp_records_total) and not stored.',
  },
} as const;

/**
 * Failures a test makes the receiver answer after a request's rows are committed, as a lost answer
 * or a proxy's timeout would look to an exporter, which then sends the request again (and must not
 * be counted twice). Only buildApp's caller can set them: no configuration reaches them.
 */
export interface OtlpFaults {
  /**
   * Asked once a request's rows are committed, with its body as received: `unavailable` answers
   * 503, `late` answers 504 request_timeout once the deadline has passed, null the true answer.
   */
  afterCommit(body: Buffer): 'unavailable' | 'late' | null;
}

async function injectFault(fault: 'unavailable' | 'late', request: FastifyRequest): Promise<never> {
  if (fault === 'unavailable')
    throw new ApiError('service_unavailable', 'injected fault: answered after the commit', { retryAfter: 1 });
  const deadline = request.deadline;
  const wait = deadline === null ? 0 : Math.max(0, deadline.at - Date.now());
  await new Promise((resolve) => setTimeout(resolve, wait + 10));
  throw new ApiError('request_timeout', 'injected fault: the deadline passed after the commit');
}

/** Registers the receiver routes in `api` (the authenticated scope) with the service's bounds. */
export function registerOtlpReceiver(
  api: FastifyInstance,
  bounds: Bounds & { retentionDays: number },
  faults?: OtlpFaults,
): void {
  const pool = createDecodePool({ maxSpans: bounds.otlpMaxSpans, bounds });
  api.addHook('onClose', async () => pool.close());
  void api.register(async (otlp) => {
    // Only the two OTLP encodings, as raw bytes: any parser inherited from the app (application/*+json
    // and the like) would hand the handler an object instead of bytes.
    otlp.removeAllContentTypeParsers();
    otlp.addContentTypeParser(
      [PROTOBUF, 'application/json'],
      { parseAs: 'buffer', bodyLimit: bounds.otlpMaxDecompressedBytes },
      (_req, body, done) => done(null, body),
    );
    otlp.setErrorHandler((err: FastifyError, request, reply) => {
      const problem = payloadProblem(err);
      // Anything else (authentication, permission, overload) is a problem+json of the catalogue.
      if (problem === null) throw err;
      const proto = isProtobuf(request);
      return reply
        .code(400)
        .type(proto ? PROTOBUF : 'application/json')
        .send(encodeStatus(INVALID_ARGUMENT, problem, proto));
    });
    for (const signal of ['traces', 'logs', 'metrics'] as const) {
      const names = SIGNALS[signal];
      otlp.post(
        `/v1/${signal}`,
        {
          bodyLimit: bounds.otlpMaxDecompressedBytes,
          schema: {
            operationId: `export${signal[0]?.toUpperCase()}${signal.slice(1)}`,
            tags: ['traces'],
            summary: names.summary,
            description:
              `Answers an ${names.response}, with partial_success when part of it was rejected. A body that is ` +
              `not a valid ${names.request} answers 400 with an OTLP Status (google.rpc.Status), in the encoding ` +
              `of the request.${names.note}`,
            body: otlpBody(names.request),
            response: {
              ...problemResponses(['unsupported_content_type', 'rate_limited']),
              200: otlpAnswer(`${names.response}, JSON or protobuf as the request`, exportResponseSchema),
              400: otlpAnswer(`the body is not a valid ${names.request} (OTLP Status)`, statusSchema, true),
            },
          },
          preParsing: async (request, _reply, payload) => {
            await assertCanIngest(request.ctx);
            await refuseSpentIngestQuota(request);
            const encoding = request.headers['content-encoding']?.trim().toLowerCase();
            if (encoding === undefined || encoding === '' || encoding === 'identity') return payload;
            if (encoding !== 'gzip') throw new PayloadError(`unsupported content-encoding ${encoding.slice(0, 40)}`);
            return gunzipped(payload, bounds.otlpMaxDecompressedBytes);
          },
        },
        async (request: FastifyRequest, reply: FastifyReply) => {
          const protobuf = isProtobuf(request);
          const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
          const bytes = body.length; // read first: decoding may move a large body to its thread, emptying it here
          const decoded = await pool.decode(body, { protobuf, signal }, request.ctx.signal);
          const { spans, points, evaluations, ignored } = decoded;
          request.ctx.checkDeadline();
          await spendIngestQuotas(request, reply, spans.length + points.length + evaluations.length + ignored, bytes);
          const result = await ingestDecoded(request.ctx, decoded);
          countIngested(request.ctx.services.metrics, signal, result, ignored);
          const fault = faults?.afterCommit(body) ?? null;
          if (fault !== null) await injectFault(fault, request);
          return reply
            .code(200)
            .type(protobuf ? PROTOBUF : 'application/json')
            .send(encodeResponse(result.rejected, result.errorMessage, protobuf, signal));
        },
      );
    }
  });
}

function countIngested(
  metrics: Metrics | undefined,
  signal: keyof typeof SIGNALS,
  result: { accepted: number; duplicates: number; rejected: number },
  ignored: number,
): void {
  if (metrics === undefined) return;
  const counts = { stored: result.accepted, duplicate: result.duplicates, rejected: result.rejected, ignored };
  for (const [outcome, n] of Object.entries(counts)) {
    if (n === 0) continue;
    if (signal === 'traces') metrics.spansIngested.inc({ outcome }, n);
    else metrics.telemetryRecords.inc({ signal, outcome }, n);
  }
}
