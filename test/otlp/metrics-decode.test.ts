/**
 * Metric requests: every data point is counted, only the harness metrics' points are built. The
 * protobuf reader (on the wire) must find the same points as protobufjs's decoding of the same
 * bytes walked as OTLP/JSON, whatever kinds of metric carry them; the mapping refuses what it
 * cannot store, with the setting to change.
 */
import { describe, expect, it } from 'vitest';
import { otlpMessages } from '../../src/otlp/messages.ts';
import { decodeMetrics, encodeMetricsRequest, type DecodedMetricPoint } from '../../src/otlp/metrics/decode.ts';
import { HARNESS_METRIC_NAMES, MAX_POINT_VALUE, mapMetricPoint, pointKey } from '../../src/otlp/metrics/mapping.ts';
import { OtlpDecodeError } from '../../src/otlp/types.ts';
import { otlpMetricsBody } from '../fixtures/otlp-body.ts';

const T = '1700000000000000000';
const kv = (key: string, v: string) => ({ key, value: { stringValue: v } });
const point = (value: object, ...attrs: [string, string][]) => ({
  timeUnixNano: T,
  startTimeUnixNano: '1699999940000000000',
  ...value,
  attributes: attrs.map(([k, v]) => kv(k, v)),
});
const delta = (...dataPoints: object[]) => ({ dataPoints, aggregationTemporality: 1, isMonotonic: true });
const message = {
  resourceMetrics: [
    {
      resource: { attributes: [kv('service.name', 'claude-code'), kv('workspace.id', 'ws-1')] },
      scopeMetrics: [
        {
          metrics: [
            {
              name: 'claude_code.lines_of_code.count',
              sum: delta(
                point({ asInt: '12' }, ['session.id', 's1'], ['type', 'added']),
                point({ asInt: '3' }, ['session.id', 's1'], ['type', 'removed']),
              ),
            },
            { name: 'claude_code.commit.count', sum: delta(point({ asInt: '1' }, ['session.id', 's1'])) },
            {
              name: 'claude_code.active_time.total',
              unit: 's',
              sum: delta(point({ asDouble: 4.5 }, ['session.id', 's1'], ['type', 'user'])),
            },
            {
              name: 'claude_code.pull_request.count',
              sum: { dataPoints: [point({ asInt: '7' }, ['session.id', 's1'])], aggregationTemporality: 2 },
            },
            { name: 'claude_code.session.count', sum: delta(point({ asInt: '1' }, ['session.id', 's1'])) },
            { name: 'g', gauge: { dataPoints: [point({ asDouble: 1 })] } },
            { name: 'h', histogram: { dataPoints: [{}, {}, {}] } },
            { name: 'e', exponentialHistogram: { dataPoints: [{}] } },
            { name: 's', summary: { dataPoints: [{}, {}] } },
            { name: 'empty' },
          ],
        },
        { metrics: [] },
      ],
    },
    {
      scopeMetrics: [
        { metrics: [{ name: 'claude_code.commit.count', gauge: { dataPoints: [point({ asInt: '2' })] } }] },
      ],
    },
  ],
};

const decode = (body: Uint8Array, protobuf: boolean, max = 1000) =>
  decodeMetrics(body, protobuf, max, HARNESS_METRIC_NAMES);
const json = (m: object) => Buffer.from(JSON.stringify(m));

/** The same bytes decoded by protobufjs and walked as OTLP/JSON: the reader's independent reference. */
function viaProtobufjs(body: Uint8Array) {
  const Request = otlpMessages.lookupType('otlp.ExportMetricsServiceRequest');
  const object = Request.toObject(Request.decode(body), { longs: String, defaults: false });
  return decode(json(object), false);
}

const BOUNDS = { maxValueBytes: 256, spanMaxTokens: 1e9, spanMaxCostUsd: 1e6, spanMaxDurationS: 86400 };

describe('metric data points', () => {
  it('are found the same in protobuf (on the wire), through protobufjs and in JSON', () => {
    const body = encodeMetricsRequest(message);
    const fromWire = decode(body, true);
    expect(fromWire).toEqual(viaProtobufjs(body));
    expect(fromWire).toEqual(decode(json(message), false));
    expect(fromWire.others).toBe(1 + 1 + 3 + 1 + 2);
    expect(fromWire.points.map((p) => [p.name, p.temporality, p.value])).toEqual([
      ['claude_code.lines_of_code.count', 1, 12],
      ['claude_code.lines_of_code.count', 1, 3],
      ['claude_code.commit.count', 1, 1],
      ['claude_code.active_time.total', 1, 4.5],
      ['claude_code.pull_request.count', 2, 7],
      ['claude_code.commit.count', -1, 2],
    ]);
    expect(fromWire.points[0]?.resource.get('workspace.id')).toBe('ws-1');
    expect(fromWire.points[0]?.timeNs).toBe(BigInt(T));
    expect(fromWire.points[0]?.attributes.get('type')).toBe('added');
  });

  it("reads a sum's temporality and a metric's name after its points (any field order)", () => {
    const Sum = otlpMessages.lookupType('otlp.Sum');
    const Metric = otlpMessages.lookupType('otlp.Metric');
    const points = Sum.encode(Sum.fromObject({ dataPoints: [point({ asInt: '5' }, ['session.id', 's9'])] })).finish();
    // Sum: data_points first, then aggregation_temporality = 1 (field 2, varint).
    const sum = Buffer.concat([points, Buffer.from([0x10, 0x01])]);
    const name = Metric.encode(Metric.fromObject({ name: 'claude_code.commit.count' })).finish();
    // Metric: sum (field 7) first, then the name.
    const metric = Buffer.concat([Buffer.from([0x3a, sum.length]), sum, name]);
    const scope = Buffer.concat([Buffer.from([0x12, metric.length]), metric]);
    const rm = Buffer.concat([Buffer.from([0x12, scope.length]), scope]);
    const body = Buffer.concat([Buffer.from([0x0a, rm.length]), rm]);
    const { points: got } = decode(body, true);
    expect(got.map((p) => [p.name, p.temporality, p.value, p.attributes.get('session.id')])).toEqual([
      ['claude_code.commit.count', 1, 5, 's9'],
    ]);
  });

  it('past the bound, or malformed, the body is refused', () => {
    const body = encodeMetricsRequest(message);
    // 6 harness points and 8 others: 14 in all.
    expect(decode(body, true, 14).others).toBe(8);
    expect(() => decode(body, true, 13)).toThrow('more than 13 data points');
    expect(() => decode(json(message), false, 13)).toThrow('more than 13 data points');
    expect(() => decode(Buffer.from([0x0a, 0x7f]), true)).toThrow(OtlpDecodeError);
    expect(() => decode(json({ resourceMetrics: {} }), false)).toThrow('resourceMetrics must be an array');
  });

  it('a point or resource with more than 128 attributes is refused', () => {
    const many = Array.from({ length: 129 }, (_, i) => [`k${i}`, 'v'] as [string, string]);
    const wide = otlpMetricsBody({
      metrics: [{ name: 'claude_code.commit.count', sum: delta(point({ asInt: '1' }, ...many)) }],
    });
    expect(() => decode(encodeMetricsRequest(wide), true)).toThrow('a data point with more than 128 attributes');
    expect(() => decode(json(wide), false)).toThrow('a data point with more than 128 attributes');
    const wideResource = { resourceMetrics: [{ resource: { attributes: many.map(([k, v]) => kv(k, v)) } }] };
    expect(() => decode(encodeMetricsRequest(wideResource), true)).toThrow('a resource with more than 128 attributes');
  });
});

describe('harness metric points, mapped', () => {
  const base: DecodedMetricPoint = {
    name: 'claude_code.lines_of_code.count',
    temporality: 1,
    startNs: 1_699_999_940_500_000_000n,
    timeNs: 1_700_000_000_500_000_000n,
    value: 12,
    attributes: new Map([
      ['session.id', 's1'],
      ['type', 'added'],
    ]),
    resource: new Map([['workspace.id', 'ws-1']]),
  };
  const map = (p: Partial<DecodedMetricPoint>) => mapMetricPoint({ ...base, ...p }, BOUNDS);

  it('maps each stored metric to its measure, with session, workspace and time', () => {
    expect(map({})).toEqual({
      invalid: null,
      metric: 'lines_added',
      key: pointKey(base),
      session: 's1',
      workspace: 'ws-1',
      time_s: 1_700_000_000,
      value: 12,
    });
    expect(
      map({ attributes: new Map([['type', 'removed']]), resource: new Map([['session.id', 's2']]) }),
    ).toMatchObject({ metric: 'lines_removed', session: 's2', workspace: null });
    expect(map({ name: 'claude_code.commit.count' })).toMatchObject({ metric: 'commits' });
    expect(map({ name: 'claude_code.pull_request.count' })).toMatchObject({ metric: 'pull_requests' });
    expect(map({ name: 'claude_code.active_time.total', value: 0 })).toMatchObject({ metric: 'active_time', value: 0 });
  });

  it('identifies a point by its series and times, whatever the order of its attributes', () => {
    const key = pointKey(base);
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    const reordered = new Map([...base.attributes].reverse());
    expect(pointKey({ ...base, attributes: reordered })).toBe(key);
    expect(pointKey({ ...base, resource: new Map([...base.resource].reverse()) })).toBe(key);
    // Any part of the series or either time makes another point.
    expect(pointKey({ ...base, startNs: base.startNs + 1n })).not.toBe(key);
    expect(pointKey({ ...base, timeNs: base.timeNs + 1n })).not.toBe(key);
    expect(pointKey({ ...base, name: 'claude_code.commit.count' })).not.toBe(key);
    expect(pointKey({ ...base, attributes: new Map([...base.attributes, ['model', 'm']]) })).not.toBe(key);
    expect(pointKey({ ...base, resource: new Map([...base.resource, ['host.name', 'h']]) })).not.toBe(key);
    // The value is not part of the identity: a point sent again is the same point.
    expect(pointKey({ ...base, value: 99 })).toBe(key);
  });

  it('refuses, with the reason, what it cannot store', () => {
    expect(map({ temporality: 2 }).invalid).toContain('OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE=delta');
    expect(map({ temporality: 0 }).invalid).toContain('only delta sums are stored');
    expect(map({ temporality: -1 }).invalid).toBe('claude_code.lines_of_code.count must be a sum');
    expect(map({ attributes: new Map([['type', 'added']]) }).invalid).toContain('OTEL_METRICS_INCLUDE_SESSION_ID');
    expect(map({ attributes: new Map([['session.id', 's1']]) }).invalid).toBe(
      'claude_code.lines_of_code.count needs a type attribute of added or removed',
    );
    expect(map({ value: -1 }).invalid).toContain('value out of range');
    expect(map({ value: MAX_POINT_VALUE + 1 }).invalid).toContain('value out of range');
    expect(map({ value: MAX_POINT_VALUE }).invalid).toBeNull();
    expect(map({ value: null }).invalid).toContain('value out of range');
    expect(map({ timeNs: 0n }).invalid).toBe('invalid time');
    expect(map({ timeNs: -1n }).invalid).toBe('invalid time');
    expect(
      map({
        attributes: new Map([
          ['session.id', 's\u00001'],
          ['type', 'added'],
        ]),
      }).invalid,
    ).toBe('a text value contains U+0000 (NUL)');
    expect(map({ resource: new Map([['workspace.id', '\u0000']]) }).invalid).toBe('a text value contains U+0000 (NUL)');
    expect(map({ resource: new Map([['workspace.id', 'w'.repeat(257)]]) }).invalid).toContain('longer than 256 bytes');
  });
});
