/**
 * The former protobuf decoding path of src/traces/otlp-decode.ts, kept for tests and the decode
 * benchmark only: protobufjs `decode` with the same message definitions, then the same walk into
 * DecodedSpan objects. The hand-written reader (otlp-proto-reader.ts) must give the same result.
 */
import protobuf from 'protobufjs';
import { OtlpDecodeError, type AttrValue, type Attributes, type DecodedSpan } from '../../src/traces/otlp-types.ts';

const root = protobuf.Root.fromJSON({
  nested: {
    otlp: {
      nested: {
        ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } } },
        ResourceSpans: { fields: { resource: { type: 'Resource', id: 1 }, scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 } } },
        Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
        ScopeSpans: { fields: { spans: { rule: 'repeated', type: 'Span', id: 2 } } },
        Span: {
          fields: {
            traceId: { type: 'bytes', id: 1 },
            spanId: { type: 'bytes', id: 2 },
            parentSpanId: { type: 'bytes', id: 4 },
            name: { type: 'string', id: 5 },
            kind: { type: 'int32', id: 6 },
            startTimeUnixNano: { type: 'fixed64', id: 7 },
            endTimeUnixNano: { type: 'fixed64', id: 8 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 9 },
            status: { type: 'SpanStatus', id: 15 },
          },
        },
        SpanStatus: { fields: { message: { type: 'string', id: 2 }, code: { type: 'int32', id: 3 } } },
        KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
        AnyValue: {
          oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'] } },
          fields: {
            stringValue: { type: 'string', id: 1 },
            boolValue: { type: 'bool', id: 2 },
            intValue: { type: 'int64', id: 3 },
            doubleValue: { type: 'double', id: 4 },
            arrayValue: { type: 'ArrayValue', id: 5 },
            kvlistValue: { type: 'KeyValueList', id: 6 },
            bytesValue: { type: 'bytes', id: 7 },
          },
        },
        ArrayValue: { fields: { values: { rule: 'repeated', type: 'AnyValue', id: 1 } } },
        KeyValueList: { fields: { values: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
      },
    },
  },
});

const Request = root.lookupType('otlp.ExportTraceServiceRequest');

type Obj = Record<string, unknown>;

function anyValue(v: unknown): AttrValue {
  if (v === null || typeof v !== 'object') return null;
  const o = v as Obj;
  // Decoded protobuf messages name their set oneof member in `value`.
  if (typeof o.value === 'string' && o.value in o) {
    const set = o[o.value];
    if (o.value === 'stringValue') return String(set);
    if (o.value === 'boolValue') return Boolean(set);
    if (o.value === 'intValue' || o.value === 'doubleValue') {
      const n = Number(typeof set === 'object' && set !== null ? String(set) : set);
      return Number.isFinite(n) ? n : null;
    }
    return null;
  }
  if (typeof o.stringValue === 'string') return o.stringValue;
  if (typeof o.boolValue === 'boolean') return o.boolValue;
  if (o.intValue !== undefined && o.intValue !== null) {
    const n = Number(typeof o.intValue === 'object' ? String(o.intValue) : o.intValue);
    return Number.isFinite(n) ? n : null;
  }
  if (o.doubleValue !== undefined && o.doubleValue !== null) {
    const n = Number(o.doubleValue);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

function attributes(list: unknown): Attributes {
  const out: Attributes = new Map();
  if (!Array.isArray(list)) return out;
  for (const kv of list) {
    if (kv === null || typeof kv !== 'object') continue;
    const { key, value } = kv as Obj;
    if (typeof key === 'string') out.set(key, anyValue(value));
  }
  return out;
}

function hexId(v: unknown): string {
  if (v === undefined || v === null) return '';
  // Unset bytes fields decode to the default (an empty array), set ones to views of the body.
  if (!(v instanceof Uint8Array)) return Array.isArray(v) ? Buffer.from(v as number[]).toString('hex') : '';
  return Buffer.from(v.buffer, v.byteOffset, v.length).toString('hex');
}

function nanos(v: unknown): bigint {
  if (v === undefined || v === null) return 0n;
  // Decoded fixed64 values are Long-like {low, high}; joining the halves avoids a decimal round trip.
  if (typeof v === 'object' && typeof (v as { low?: unknown }).low === 'number') {
    const { low, high } = v as { low: number; high: number };
    return (BigInt(high >>> 0) << 32n) | BigInt(low >>> 0);
  }
  try {
    return BigInt(typeof v === 'object' ? String(v) : (v as string | number));
  } catch {
    return -1n;
  }
}

function collect(message: Obj): DecodedSpan[] {
  const out: DecodedSpan[] = [];
  const resourceSpans = message.resourceSpans;
  if (resourceSpans !== undefined && !Array.isArray(resourceSpans)) throw new OtlpDecodeError('resourceSpans must be an array');
  for (const rs of (resourceSpans ?? []) as Obj[]) {
    if (rs === null || typeof rs !== 'object') throw new OtlpDecodeError('resourceSpans entries must be objects');
    const resource = attributes((rs.resource as Obj | undefined)?.attributes);
    for (const ss of (Array.isArray(rs.scopeSpans) ? rs.scopeSpans : []) as Obj[]) {
      for (const s of (Array.isArray(ss?.spans) ? ss.spans : []) as Obj[]) {
        if (s === null || typeof s !== 'object') throw new OtlpDecodeError('spans entries must be objects');
        const status = (s.status ?? {}) as Obj;
        out.push({
          traceId: hexId(s.traceId),
          spanId: hexId(s.spanId),
          parentSpanId: hexId(s.parentSpanId) || null,
          name: typeof s.name === 'string' ? s.name : '',
          startNs: nanos(s.startTimeUnixNano),
          endNs: nanos(s.endTimeUnixNano),
          statusCode: Number(status.code ?? 0),
          attributes: attributes(s.attributes),
          resource,
        });
      }
    }
  }
  return out;
}

/** The former `decodeProtobuf`: protobufjs decoding, any failure as OtlpDecodeError. */
export function decodeProtobufReference(body: Buffer): DecodedSpan[] {
  let message: Obj;
  try {
    message = Request.decode(body) as unknown as Obj;
  } catch {
    throw new OtlpDecodeError('the body is not a protobuf ExportTraceServiceRequest');
  }
  return collect(message);
}
