/**
 * Metric requests are counted, not stored: the protobuf count is made on the wire (nothing built)
 * and must equal the data points of the message, whatever kinds of metric carry them.
 */
import { describe, expect, it } from 'vitest';
import { countMetricsJson, countMetricsProtobuf, encodeMetricsRequest } from '../../src/traces/otlp-metrics.ts';
import { OtlpDecodeError } from '../../src/traces/otlp-types.ts';

const point = { asInt: '1', timeUnixNano: '1700000000000000000' };
const message = {
  resourceMetrics: [
    {
      scopeMetrics: [
        {
          metrics: [
            { name: 'claude_code.commit.count', sum: { dataPoints: [point, point], isMonotonic: true } },
            { name: 'g', gauge: { dataPoints: [point] } },
            { name: 'h', histogram: { dataPoints: [{}, {}, {}] } },
            { name: 'e', exponentialHistogram: { dataPoints: [{}] } },
            { name: 's', summary: { dataPoints: [{}, {}] } },
            { name: 'empty' },
          ],
        },
        { metrics: [] },
      ],
    },
    { scopeMetrics: [{ metrics: [{ name: 'x', sum: { dataPoints: [point] } }] }] },
  ],
};

describe('metric data points', () => {
  it('are counted the same in protobuf (on the wire) and JSON', () => {
    expect(countMetricsProtobuf(encodeMetricsRequest(message), 1000)).toBe(10);
    expect(countMetricsJson(Buffer.from(JSON.stringify(message)), 1000)).toBe(10);
  });

  it('past the bound, or malformed, the body is refused', () => {
    expect(() => countMetricsProtobuf(encodeMetricsRequest(message), 9)).toThrow('more than 9 data points');
    expect(() => countMetricsJson(Buffer.from(JSON.stringify(message)), 9)).toThrow('more than 9 data points');
    expect(() => countMetricsProtobuf(Buffer.from([0x0a, 0x7f]), 10)).toThrow(OtlpDecodeError);
  });
});
