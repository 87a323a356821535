/**
 * Claude Code's metric points that the statistics use (docs/send-telemetry.md), mapped to the
 * harness measures of store/trace-port.ts and checked (DESIGN §12). A point is one delta of a
 * counter for one session: cumulative sums, points without a session and values out of range are
 * refused with the reason, so a sender learns which setting to change. Other metrics are not
 * stored (counted as ignored). Runs where the body is decoded (the decode worker).
 */
import { hash } from 'node:crypto';
import type { HarnessMeasure } from '../../store/trace-port.ts';
import type { DecodedMetricPoint } from './decode.ts';
import type { Attributes, AttrValue } from '../types.ts';
import { NUL_REFUSED, hasNul, timeRefused, type SpanBounds } from '../traces/mapping.ts';

const LINES = 'claude_code.lines_of_code.count';
/** Stored metrics by name; lines of code split by their `type` attribute. */
const MEASURE_OF: Record<string, HarnessMeasure | null> = {
  [LINES]: null,
  'claude_code.commit.count': 'commits',
  'claude_code.pull_request.count': 'pull_requests',
  'claude_code.active_time.total': 'active_time',
};
export const HARNESS_METRIC_NAMES: ReadonlySet<string> = new Set(Object.keys(MEASURE_OF));

/** The largest value one point may carry (lines, commits or seconds in one export interval). */
export const MAX_POINT_VALUE = 1e9;

/** A decoded point, mapped and checked: the reason it is refused, or what is stored. */
export type MappedPoint =
  | { invalid: string }
  | {
      invalid: null;
      metric: HarnessMeasure;
      /** The point's identity (store/trace-port.ts MetricPointRow.key). */
      key: string;
      session: string;
      /** Resource `workspace.id`, else null (the sender's default workspace). */
      workspace: string | null;
      time_s: number;
      value: number;
    };

const text = (v: AttrValue | undefined): string | null =>
  v === undefined || v === null || v === '' ? null : String(v);
const bytes = (s: string | null) => (s === null ? 0 : Buffer.byteLength(s, 'utf8'));

function measureOf(p: DecodedMetricPoint): HarnessMeasure | { invalid: string } {
  if (p.name !== LINES) return MEASURE_OF[p.name] ?? { invalid: `${p.name} is not stored` };
  const type = text(p.attributes.get('type'));
  if (type === 'added') return 'lines_added';
  if (type === 'removed') return 'lines_removed';
  return { invalid: `${LINES} needs a type attribute of added or removed` };
}

/** Attributes in key order, an empty value as null (protobuf's empty AnyValue is '', JSON's `{}` null). */
const sortedEntries = (a: Attributes) =>
  [...a].map(([k, v]) => [k, v === '' ? null : v] as const).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));

/**
 * The identity of a point among its organization's: its series (the metric's name, the point's
 * and the resource's attributes, in any order) and its start and end times, hashed to 128 bits.
 * An exporter that sends the same point again (a retried request) sends the same identity.
 */
export function pointKey(p: DecodedMetricPoint): string {
  const identity = JSON.stringify([
    p.name,
    sortedEntries(p.attributes),
    sortedEntries(p.resource),
    String(p.startNs),
    String(p.timeNs),
  ]);
  return hash('sha256', identity).slice(0, 32);
}

export function mapMetricPoint(p: DecodedMetricPoint, bounds: SpanBounds): MappedPoint {
  const metric = measureOf(p);
  if (typeof metric !== 'string') return metric;
  if (p.temporality === -1) return { invalid: `${p.name} must be a sum` };
  if (p.temporality !== 1)
    return {
      invalid: `${p.name}: only delta sums are stored; set OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE=delta (Claude Code's default)`,
    };
  if (p.timeNs <= 0n) return { invalid: 'invalid time' };
  const timeS = Number(p.timeNs / 1_000_000_000n);
  const future = timeRefused(timeS, bounds.retentionDays);
  if (future !== null) return { invalid: future };
  if (p.value === null || !(p.value >= 0 && p.value <= MAX_POINT_VALUE))
    return { invalid: `value out of range (0 to ${MAX_POINT_VALUE.toLocaleString('en-US')} per point)` };
  const session = text(p.attributes.get('session.id')) ?? text(p.resource.get('session.id'));
  if (session === null)
    return { invalid: 'no session.id attribute (Claude Code sends it unless OTEL_METRICS_INCLUDE_SESSION_ID=false)' };
  const workspace = text(p.resource.get('workspace.id'));
  if (hasNul([session, workspace])) return { invalid: NUL_REFUSED };
  if (bytes(session) > bounds.maxValueBytes || bytes(workspace) > bounds.maxValueBytes)
    return { invalid: `an attribute value longer than ${bounds.maxValueBytes} bytes` };
  return { invalid: null, metric, key: pointKey(p), session, workspace, time_s: timeS, value: p.value };
}
