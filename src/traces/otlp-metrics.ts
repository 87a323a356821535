/**
 * OTLP metric requests (ExportMetricsServiceRequest, protobuf or JSON): accepted so that harness
 * and SDK exporters do not fail, and counted. No metric is stored yet (docs/send-telemetry.md);
 * the receiver answers with the number of data points it read, bounded like spans: at most
 * `maxPoints` (OTLP_MAX_SPANS) per request.
 */
import { otlpMessages } from './otlp-messages.ts';
import { isObj, parseJsonObject, type Obj } from './otlp-decode.ts';
import { OtlpDecodeError } from './otlp-types.ts';

const Request = otlpMessages.lookupType('otlp.ExportMetricsServiceRequest');
const KINDS = ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary'] as const;

const list = (v: unknown, what: string): unknown[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new OtlpDecodeError(`${what} must be an array`);
  return v;
};

/** The data points of a decoded ExportMetricsServiceRequest object (parsed JSON or a protobufjs message). */
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
        if (points > maxPoints)
          throw new OtlpDecodeError(
            `the request carries more than ${maxPoints} data points; send at most ${maxPoints} per request`,
          );
      }
    }
  }
  return points;
}

export function countMetricsProtobuf(body: Uint8Array, maxPoints: number): number {
  let message: Obj;
  try {
    message = Request.decode(body);
  } catch {
    throw new OtlpDecodeError('the body is not a valid ExportMetricsServiceRequest');
  }
  return countDataPoints(message, maxPoints);
}

export function countMetricsJson(body: Uint8Array, maxPoints: number): number {
  return countDataPoints(parseJsonObject(body, 'ExportMetricsServiceRequest'), maxPoints);
}
