/**
 * OTLP metric requests (ExportMetricsServiceRequest, protobuf or JSON): every data point is counted
 * (at most `maxPoints`, OTLP_MAX_SPANS, per request), and only the points of the harness metrics
 * that are stored (otlp/metrics/mapping.ts) are built, with their resource and point attributes. Protobuf
 * bodies are read on the wire in one bounded pass (the logs reader's primitives), so 16 MiB of
 * other metrics costs a scan, not objects; JSON ones are parsed (depth-checked) and walked.
 */
import { otlpMessages } from '../messages.ts';
import { attributes, isObj, nanos, type Obj } from '../traces/decode.ts';
import { parseJsonObject } from '../json-body.ts';
import { readKeyValue, SpanReader } from '../traces/proto-reader.ts';
import { MAX_ATTRIBUTES, OtlpDecodeError, tooManyAttributes, type Attributes } from '../types.ts';
import {
  I64,
  LEN,
  VARINT,
  readFiniteDouble,
  readFixed64,
  readLimit,
  readString,
  readTag,
  readVarint,
  skipField,
  tag,
} from '../protobuf-wire.ts';

/** A data point of a stored harness metric, as received. */
export interface DecodedMetricPoint {
  name: string;
  /** Sum.aggregation_temporality (1 delta, 2 cumulative, 0 unspecified); -1 when not a sum. */
  temporality: number;
  /** start_time_unix_nano (0 when absent): with the series and timeNs, the point's identity. */
  startNs: bigint;
  timeNs: bigint;
  /** as_int or as_double; null when neither is set or the double is not finite. */
  value: number | null;
  attributes: Attributes;
  resource: Attributes;
}

export interface DecodedMetrics {
  points: DecodedMetricPoint[];
  /** Data points of every other metric (acknowledged, not stored). */
  others: number;
}

const Request = otlpMessages.lookupType('otlp.ExportMetricsServiceRequest');
const KINDS = ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary'] as const;

const tooMany = (max: number) =>
  new OtlpDecodeError(`the request carries more than ${max} data points; send at most ${max} per request`);

const list = (v: unknown, what: string): unknown[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new OtlpDecodeError(`${what} must be an array`);
  return v;
};

/** Collects the points of one request, counting all and building only those `wanted` names. */
class Collector {
  readonly out: DecodedMetrics = { points: [], others: 0 };
  private count = 0;
  private readonly maxPoints: number;
  private readonly wanted: ReadonlySet<string>;

  constructor(maxPoints: number, wanted: ReadonlySet<string>) {
    this.maxPoints = maxPoints;
    this.wanted = wanted;
  }

  wants(name: string): boolean {
    return this.wanted.has(name);
  }

  counted(): void {
    if (++this.count > this.maxPoints) throw tooMany(this.maxPoints);
  }

  other(): void {
    this.counted();
    this.out.others++;
  }

  add(point: DecodedMetricPoint): void {
    this.counted();
    if (point.attributes.size > MAX_ATTRIBUTES) throw tooManyAttributes('a data point');
    this.out.points.push(point);
  }
}

/** OTLP/JSON writes the temporality as its number; some encoders write the enum's name. */
function temporalityOf(v: unknown): number {
  if (v === 'AGGREGATION_TEMPORALITY_DELTA') return 1;
  if (v === 'AGGREGATION_TEMPORALITY_CUMULATIVE') return 2;
  return typeof v === 'number' ? v : 0;
}

/** as_int (a string or number in JSON) or as_double. */
function jsonValue(p: Obj): number | null {
  const raw = p.asInt ?? p.asDouble;
  const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : typeof raw === 'number' ? raw : NaN;
  return Number.isFinite(n) ? n : null;
}

/** The data points of a parsed OTLP/JSON ExportMetricsServiceRequest. */
function collectJson(message: Obj, c: Collector): void {
  for (const rm of list(message.resourceMetrics, 'resourceMetrics')) {
    if (!isObj(rm)) throw new OtlpDecodeError('resourceMetrics entries must be objects');
    const resource = attributes(isObj(rm.resource) ? rm.resource.attributes : undefined);
    if (resource.size > MAX_ATTRIBUTES) throw tooManyAttributes('a resource');
    for (const sm of list(rm.scopeMetrics, 'scopeMetrics')) {
      if (!isObj(sm)) throw new OtlpDecodeError('scopeMetrics entries must be objects');
      for (const m of list(sm.metrics, 'metrics')) {
        if (!isObj(m)) throw new OtlpDecodeError('metrics entries must be objects');
        const name = typeof m.name === 'string' ? m.name : '';
        for (const kind of KINDS) {
          const data = m[kind];
          if (!isObj(data)) continue;
          for (const p of list(data.dataPoints, 'dataPoints')) {
            if (!c.wants(name)) {
              c.other();
              continue;
            }
            if (!isObj(p)) throw new OtlpDecodeError('dataPoints entries must be objects');
            c.add({
              name,
              temporality: kind === 'sum' ? temporalityOf(data.aggregationTemporality) : -1,
              startNs: nanos(p.startTimeUnixNano),
              timeNs: nanos(p.timeUnixNano),
              value: jsonValue(p),
              attributes: attributes(p.attributes),
              resource,
            });
          }
        }
      }
    }
  }
}

const RESOURCE_METRICS = tag(1, LEN);
const RESOURCE = tag(1, LEN);
const SCOPE_METRICS = tag(2, LEN);
const RESOURCE_ATTRIBUTES = tag(1, LEN);
const METRICS = tag(2, LEN);
const METRIC_NAME = tag(1, LEN);
const SUM = tag(7, LEN);
/** Metric.gauge, sum, histogram, exponential_histogram, summary: each holds data_points (field 1). */
const DATA = new Set([5, 7, 9, 10, 11].map((f) => tag(f, LEN)));
const DATA_POINTS = tag(1, LEN);
const SUM_TEMPORALITY = tag(2, VARINT);
const POINT_START = tag(2, I64);
const POINT_TIME = tag(3, I64);
const POINT_AS_DOUBLE = tag(4, I64);
const POINT_AS_INT = tag(6, I64);
const POINT_ATTRIBUTES = tag(7, LEN);

/** Message depths as protobufjs counts them (the request is 0). */
const RESOURCE_KEY_VALUE_DEPTH = 3;
const POINT_KEY_VALUE_DEPTH = 6;

/**
 * Calls `each` with the bounds of every `field` message in [start, end), the others skipped, and
 * leaves r.pos at `end`. Nothing is collected: a body of millions of empty messages costs a scan.
 * Fields that must be known before the messages they qualify (a resource, a metric's name, a sum's
 * temporality) are read by a first pass of their own, as the encoding does not fix the order.
 */
function each(
  r: SpanReader,
  start: number,
  end: number,
  field: number | ReadonlySet<number>,
  fn: (s: number, e: number, t: number) => void,
): void {
  r.pos = start;
  while (r.pos < end) {
    const t = readTag(r, end);
    if (typeof field === 'number' ? t === field : field.has(t)) {
      const stop = readLimit(r, end);
      fn(r.pos, stop, t);
      r.pos = stop;
    } else skipField(r, t, end);
  }
}

function readAttributes(r: SpanReader, end: number, depth: number, into: Attributes, what: string): void {
  readKeyValue(r, end, depth);
  if (!into.has(r.key) && into.size >= MAX_ATTRIBUTES) throw tooManyAttributes(what);
  into.set(r.key, r.value);
}

function readPoint(r: SpanReader, end: number): Omit<DecodedMetricPoint, 'name' | 'temporality' | 'resource'> {
  const attrs: Attributes = new Map();
  let startNs = 0n;
  let timeNs = 0n;
  let value: number | null = null;
  while (r.pos < end) {
    const t = readTag(r, end);
    if (t === POINT_START) startNs = readFixed64(r, end);
    else if (t === POINT_TIME) timeNs = readFixed64(r, end);
    else if (t === POINT_AS_DOUBLE) value = readFiniteDouble(r, end);
    else if (t === POINT_AS_INT) value = Number(BigInt.asIntN(64, readFixed64(r, end)));
    else if (t === POINT_ATTRIBUTES) readAttributes(r, readLimit(r, end), POINT_KEY_VALUE_DEPTH, attrs, 'a data point');
    else skipField(r, t, end);
  }
  return { startNs, timeNs, value, attributes: attrs };
}

/** The last value of a scalar field of the message in [start, end) (first pass), or `absent`. */
function scalar<T>(r: SpanReader, start: number, end: number, field: number, read: (end: number) => T, absent: T): T {
  let value = absent;
  r.pos = start;
  while (r.pos < end) {
    const t = readTag(r, end);
    if (t === field) value = read(end);
    else skipField(r, t, end);
  }
  return value;
}

function readMetric(r: SpanReader, start: number, end: number, resource: Attributes, c: Collector): void {
  const name = scalar(r, start, end, METRIC_NAME, (e) => readString(r, e), '');
  const wanted = c.wants(name);
  each(r, start, end, DATA, (dStart, dEnd, t) => {
    const temporality = t === SUM ? scalar(r, dStart, dEnd, SUM_TEMPORALITY, (e) => readVarint(r, e), 0) : -1;
    each(r, dStart, dEnd, DATA_POINTS, (pStart, pEnd) => {
      if (!wanted) {
        c.other();
        return;
      }
      r.pos = pStart;
      c.add({ name, temporality, resource, ...readPoint(r, pEnd) });
    });
  });
}

/** The data points of a protobuf ExportMetricsServiceRequest, read on the wire. */
function collectProtobuf(body: Uint8Array, c: Collector): void {
  const r = new SpanReader(body, 0, 'protobuf ExportMetricsServiceRequest');
  each(r, 0, body.length, RESOURCE_METRICS, (rmStart, rmEnd) => {
    const resource: Attributes = new Map();
    each(r, rmStart, rmEnd, RESOURCE, (resStart, resEnd) =>
      each(r, resStart, resEnd, RESOURCE_ATTRIBUTES, (aStart, aEnd) => {
        r.pos = aStart;
        readAttributes(r, aEnd, RESOURCE_KEY_VALUE_DEPTH, resource, 'a resource');
      }),
    );
    each(r, rmStart, rmEnd, SCOPE_METRICS, (smStart, smEnd) =>
      each(r, smStart, smEnd, METRICS, (mStart, mEnd) => readMetric(r, mStart, mEnd, resource, c)),
    );
  });
}

/** The harness points (metrics named in `wanted`) of a metrics body, and the count of all others. */
export function decodeMetrics(
  body: Uint8Array,
  protobuf: boolean,
  maxPoints: number,
  wanted: ReadonlySet<string>,
): DecodedMetrics {
  const c = new Collector(maxPoints, wanted);
  if (protobuf) collectProtobuf(body, c);
  else collectJson(parseJsonObject(body, 'ExportMetricsServiceRequest'), c);
  return c.out;
}

/** Encodes an ExportMetricsServiceRequest to protobuf: for tests and clients. */
export function encodeMetricsRequest(message: object): Buffer {
  return Buffer.from(Request.encode(Request.fromObject(message)).finish());
}
