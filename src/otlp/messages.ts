/**
 * The project's own protobufjs definitions of the opentelemetry-proto messages it reads or writes
 * (field numbers from collector/{trace,logs,metrics}/v1, trace/v1, logs/v1, metrics/v1, common/v1,
 * resource/v1). Only the fields the receiver uses are listed: events and links of spans, exemplars,
 * histogram buckets and scopes are skipped as unknown fields. Requests are read by hand-written
 * readers (otlp/traces/proto-reader.ts, otlp/logs/proto-reader.ts, otlp/metrics/decode.ts); these encode every answer
 * and the requests of clients, benchmarks and tests, and serve the tests' reference decoders.
 */
import protobuf from 'protobufjs';

const repeated = (type: string, id: number) => ({ rule: 'repeated', type, id });
const partialSuccess = (rejected: string) => ({
  fields: { [rejected]: { type: 'int64', id: 1 }, errorMessage: { type: 'string', id: 2 } },
});
const numberDataPoint = {
  oneofs: { value: { oneof: ['asDouble', 'asInt'] } },
  fields: {
    startTimeUnixNano: { type: 'fixed64', id: 2 },
    timeUnixNano: { type: 'fixed64', id: 3 },
    asDouble: { type: 'double', id: 4 },
    asInt: { type: 'sfixed64', id: 6 },
    attributes: repeated('KeyValue', 7),
  },
};

export const otlpMessages = protobuf.Root.fromJSON({
  nested: {
    otlp: {
      nested: {
        ExportTraceServiceRequest: { fields: { resourceSpans: repeated('ResourceSpans', 1) } },
        ExportTraceServiceResponse: { fields: { partialSuccess: { type: 'ExportTracePartialSuccess', id: 1 } } },
        ExportTracePartialSuccess: partialSuccess('rejectedSpans'),
        Status: { fields: { code: { type: 'int32', id: 1 }, message: { type: 'string', id: 2 } } },
        ResourceSpans: { fields: { resource: { type: 'Resource', id: 1 }, scopeSpans: repeated('ScopeSpans', 2) } },
        Resource: { fields: { attributes: repeated('KeyValue', 1) } },
        ScopeSpans: { fields: { spans: repeated('Span', 2) } },
        Span: {
          fields: {
            traceId: { type: 'bytes', id: 1 },
            spanId: { type: 'bytes', id: 2 },
            parentSpanId: { type: 'bytes', id: 4 },
            name: { type: 'string', id: 5 },
            kind: { type: 'int32', id: 6 },
            startTimeUnixNano: { type: 'fixed64', id: 7 },
            endTimeUnixNano: { type: 'fixed64', id: 8 },
            attributes: repeated('KeyValue', 9),
            status: { type: 'SpanStatus', id: 15 },
          },
        },
        SpanStatus: { fields: { message: { type: 'string', id: 2 }, code: { type: 'int32', id: 3 } } },
        KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
        AnyValue: {
          oneofs: {
            value: {
              oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'],
            },
          },
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
        ArrayValue: { fields: { values: repeated('AnyValue', 1) } },
        KeyValueList: { fields: { values: repeated('KeyValue', 1) } },

        ExportLogsServiceRequest: { fields: { resourceLogs: repeated('ResourceLogs', 1) } },
        ExportLogsServiceResponse: { fields: { partialSuccess: { type: 'ExportLogsPartialSuccess', id: 1 } } },
        ExportLogsPartialSuccess: partialSuccess('rejectedLogRecords'),
        ResourceLogs: { fields: { resource: { type: 'Resource', id: 1 }, scopeLogs: repeated('ScopeLogs', 2) } },
        ScopeLogs: { fields: { logRecords: repeated('LogRecord', 2) } },
        LogRecord: {
          fields: {
            timeUnixNano: { type: 'fixed64', id: 1 },
            severityNumber: { type: 'int32', id: 2 },
            severityText: { type: 'string', id: 3 },
            body: { type: 'AnyValue', id: 5 },
            attributes: repeated('KeyValue', 6),
            traceId: { type: 'bytes', id: 9 },
            spanId: { type: 'bytes', id: 10 },
            observedTimeUnixNano: { type: 'fixed64', id: 11 },
            eventName: { type: 'string', id: 12 },
          },
        },

        ExportMetricsServiceRequest: { fields: { resourceMetrics: repeated('ResourceMetrics', 1) } },
        ExportMetricsServiceResponse: {
          fields: { partialSuccess: { type: 'ExportMetricsPartialSuccess', id: 1 } },
        },
        ExportMetricsPartialSuccess: partialSuccess('rejectedDataPoints'),
        ResourceMetrics: {
          fields: { resource: { type: 'Resource', id: 1 }, scopeMetrics: repeated('ScopeMetrics', 2) },
        },
        ScopeMetrics: { fields: { metrics: repeated('Metric', 2) } },
        Metric: {
          oneofs: { data: { oneof: ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary'] } },
          fields: {
            name: { type: 'string', id: 1 },
            unit: { type: 'string', id: 3 },
            gauge: { type: 'Gauge', id: 5 },
            sum: { type: 'Sum', id: 7 },
            histogram: { type: 'PointCount', id: 9 },
            exponentialHistogram: { type: 'PointCount', id: 10 },
            summary: { type: 'PointCount', id: 11 },
          },
        },
        Gauge: { fields: { dataPoints: repeated('NumberDataPoint', 1) } },
        Sum: {
          fields: {
            dataPoints: repeated('NumberDataPoint', 1),
            aggregationTemporality: { type: 'int32', id: 2 },
            isMonotonic: { type: 'bool', id: 3 },
          },
        },
        NumberDataPoint: numberDataPoint,
        // Histogram, exponential histogram and summary points are acknowledged and counted, not read:
        // only their number matters (each data point is a message in field 1 of all three).
        PointCount: { fields: { dataPoints: repeated('Opaque', 1) } },
        Opaque: { fields: {} },
      },
    },
  },
});
