/**
 * OTLP metric requests (ExportMetricsServiceRequest, protobuf or JSON): accepted so that harness
 * and SDK exporters do not fail, and counted. No metric is stored yet (docs/send-telemetry.md).
 * Protobuf bodies are only counted, on the wire (nothing is built); JSON ones are parsed (depth-
 * checked) and walked. At most `maxPoints` (OTLP_MAX_SPANS) data points per request.
 */
import { otlpMessages } from './otlp-messages.ts';
import { isObj, parseJsonObject, type Obj } from './otlp-decode.ts';
import { OtlpDecodeError } from './otlp-types.ts';
import { LEN, readLimit, readTag, skipField, tag, WireReader } from './protobuf-wire.ts';

const Request = otlpMessages.lookupType('otlp.ExportMetricsServiceRequest');
const KINDS = ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary'] as const;

const tooMany = (max: number) =>
  new OtlpDecodeError(`the request carries more than ${max} data points; send at most ${max} per request`);

const list = (v: unknown, what: string): unknown[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new OtlpDecodeError(`${what} must be an array`);
  return v;
};

/** The data points of a parsed OTLP/JSON ExportMetricsServiceRequest. */
function countDataPoints(message: Obj, maxPoints: number): number {
  let points = 0;
  for (const rm of list(message.resourceMetrics, 'resourceMetrics')) {
    if (!isObj(rm)) throw new OtlpDecodeError('resourceMetrics entries must be objects');
    for (const sm of list(rm.scopeMetrics, 'scopeMetrics')) {
      if (!isObj(sm)) throw new OtlpDecodeError('scopeMetrics entries must be objects');
      for (const m of list(sm.metrics, 'metrics')) {
        if (!isObj(m)) throw new OtlpDecodeError('metrics entries must be objects');
        for (const kind of KINDS) {
          const data = m[kind];
          if (isObj(data)) points += list(data.dataPoints, 'dataPoints').length;
        }
        if (points > maxPoints) throw tooMany(maxPoints);
      }
    }
  }
  return points;
}

const RESOURCE_METRICS = tag(1, LEN);
const SCOPE_METRICS = tag(2, LEN);
const METRICS = tag(2, LEN);
/** Metric.gauge, sum, histogram, exponential_histogram, summary: each holds data_points (field 1). */
const DATA = new Set([5, 7, 9, 10, 11].map((f) => tag(f, LEN)));
const DATA_POINTS = tag(1, LEN);

/** Calls `each` with the end of every `field` message in [r.pos, end). */
function eachMessage(r: WireReader, end: number, field: number | Set<number>, each: (end: number) => void): void {
  while (r.pos < end) {
    const t = readTag(r, end);
    if (typeof field === 'number' ? t === field : field.has(t)) {
      const stop = readLimit(r, end);
      each(stop);
      r.pos = stop;
    } else skipField(r, t, end);
  }
}

/** The data points of a protobuf ExportMetricsServiceRequest, counted on the wire. */
export function countMetricsProtobuf(body: Uint8Array, maxPoints: number): number {
  const r = new WireReader(body, 'protobuf ExportMetricsServiceRequest');
  let points = 0;
  eachMessage(r, body.length, RESOURCE_METRICS, (rmEnd) => {
    eachMessage(r, rmEnd, SCOPE_METRICS, (smEnd) => {
      eachMessage(r, smEnd, METRICS, (mEnd) => {
        eachMessage(r, mEnd, DATA, (dataEnd) => {
          eachMessage(r, dataEnd, DATA_POINTS, () => {
            if (++points > maxPoints) throw tooMany(maxPoints);
          });
        });
      });
    });
  });
  return points;
}

export function countMetricsJson(body: Uint8Array, maxPoints: number): number {
  return countDataPoints(parseJsonObject(body, 'ExportMetricsServiceRequest'), maxPoints);
}

/** Encodes an ExportMetricsServiceRequest to protobuf: for tests and clients. */
export function encodeMetricsRequest(message: object): Buffer {
  return Buffer.from(Request.encode(Request.fromObject(message)).finish());
}
