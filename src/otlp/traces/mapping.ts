/**
 * DESIGN §9's attribute mapping and span categories (span attributes first, then resource
 * attributes), and DESIGN §12's checks of what a sender may claim: ids and times well formed,
 * stored values within their byte bound, tokens, cost and duration within their ranges. Runs where
 * the body is decoded (the decode worker); the sender's rights (workspace, skill) are checked by
 * otlp/ingest.ts, which knows the caller.
 */
import type { SpanCategory, SpanRow } from '../../store/trace-port.ts';
import { MAX_ATTRIBUTES, type DecodedSpan } from '../types.ts';
import { priceOf } from '../prices.ts';
import { first, mcpRequest, mcpServer, number, readSpan, text, type Reading } from './conventions.ts';

const ID = /^[0-9a-f]+$/;

/** What a span may claim; the defaults are DESIGN §12's (config.ts reads them). */
export interface SpanBounds {
  maxValueBytes: number;
  spanMaxTokens: number;
  spanMaxCostUsd: number;
  spanMaxDurationS: number;
  /** TRACE_RETENTION_DAYS: a span or point starting before its cutoff is refused (0 keeps everything). */
  retentionDays?: number;
}

/**
 * The furthest ahead of the receiver's clock a span or metric point may start (seconds): a day of
 * clock skew is accepted, a later time is refused. Stores keep a time partition for every month
 * up to two ahead (postgres/partitions.ts) and retention only removes the past, so a time far in
 * the future would be kept forever outside any partition.
 */
const MAX_FUTURE_S = 86_400;

/**
 * Why a time (epoch seconds) is refused, or null: more than a day ahead, or before the retention
 * cutoff. Retention would delete such a span within the hour; refused, it cannot be stored again
 * after its first copy was deleted, which would count it twice against statistics over older
 * ranges kept by a longer setting later (exactly once, DESIGN §12).
 */
export function timeRefused(s: number, retentionDays = 0, nowS = Date.now() / 1000): string | null {
  if (s > nowS + MAX_FUTURE_S) return "a start time more than a day ahead of the receiver's clock";
  if (retentionDays > 0 && s < nowS - retentionDays * 86_400)
    return `a start time more than ${retentionDays} days ago: older than the retention period (TRACE_RETENTION_DAYS)`;
  return null;
}

/** What a span says about its skill before resolution: an id, a name, or nothing. */
type SkillRef = { id: string } | { name: string };

/** What a span says about its agent (`gen_ai.agent.id`, `gen_ai.agent.name`); otlp/ingest.ts resolves it. */
interface AgentRef {
  id: string | null;
  name: string | null;
}

/** A span row before the caller's context is known: the fields otlp/ingest.ts adds are left out. */
export type SpanFields = Omit<SpanRow, 'org_id' | 'workspace_id' | 'skill' | 'agent'>;

/** A decoded span, mapped and checked: the reason it is refused, or its fields and claims. */
export type MappedSpan =
  | { invalid: string }
  | { invalid: null; fields: SpanFields; workspace: string | null; skill: SkillRef | null; agent: AgentRef };

function categoryOf(reading: Reading, hasSkill: boolean): SpanCategory {
  if (reading.category === 'invoke_skill' || (reading.category === null && hasSkill)) return 'skill_invocation';
  return reading.category ?? 'other';
}

function skillRef(span: DecodedSpan): SkillRef | null {
  const id = text(first(span, 'skill.id', 'gen_ai.skill.id'));
  if (id !== null) return { id };
  const name = text(first(span, 'skill.name', 'gen_ai.skill.name'));
  return name === null ? null : { name };
}

/** Why the span's ids, times or attribute count cannot be stored, or null. */
function malformed(span: DecodedSpan): string | null {
  if (span.traceId.length !== 32 || !ID.test(span.traceId) || /^0+$/.test(span.traceId)) return 'invalid trace_id';
  if (span.spanId.length !== 16 || !ID.test(span.spanId) || /^0+$/.test(span.spanId)) return 'invalid span_id';
  if (span.parentSpanId !== null && (span.parentSpanId.length !== 16 || !ID.test(span.parentSpanId)))
    return 'invalid parent_span_id';
  if (span.startNs <= 0n || span.endNs < span.startNs) return 'invalid start or end time';
  if (span.attributes.size > MAX_ATTRIBUTES || span.resource.size > MAX_ATTRIBUTES)
    return `more than ${MAX_ATTRIBUTES} attributes on the span or its resource`;
  return null;
}

/** PostgreSQL text cannot hold U+0000: refused on every engine (spans and metric points), so both store the same. */
export const NUL_REFUSED = 'a text value contains U+0000 (NUL)';
export const hasNul = (values: readonly (string | null)[]): boolean =>
  values.some((v) => v?.includes('\u0000') === true);

/** Versions are 32-bit integers in both stores; a larger one is treated as absent. */
const MAX_VERSION = 2 ** 31 - 1;

const bytes = (s: string | null) => (s === null ? 0 : Buffer.byteLength(s, 'utf8'));

/** Why the mapped values are out of their bounds (DESIGN §12), or null. */
function outOfBounds(
  f: SpanFields,
  claims: (string | null)[],
  counts: readonly number[],
  b: SpanBounds,
): string | null {
  const values = [f.harness, f.command, f.mcp, f.tool, f.model, f.provider, f.user, f.session, ...claims];
  if (hasNul([...values, f.name])) return NUL_REFUSED;
  if (values.some((v) => bytes(v) > b.maxValueBytes) || bytes(f.name) > 4 * b.maxValueBytes) {
    return `an attribute value longer than ${b.maxValueBytes} bytes (span name: ${4 * b.maxValueBytes})`;
  }
  if (!(counts.every((n) => n >= 0 && n <= b.spanMaxTokens) && f.tokens <= b.spanMaxTokens))
    return `token counts out of range (0 to ${b.spanMaxTokens.toLocaleString('en-US')} per span)`;
  if (!(f.cost >= 0 && f.cost <= b.spanMaxCostUsd))
    return `cost out of range (0 to ${b.spanMaxCostUsd.toLocaleString('en-US')} USD per span)`;
  if (f.duration_ms > b.spanMaxDurationS * 1000)
    return `duration out of range (at most ${b.spanMaxDurationS.toLocaleString('en-US')} s)`;
  return timeRefused(f.start_s, b.retentionDays);
}

/** Maps one decoded span and checks it against `bounds`. */
export function mapSpan(span: DecodedSpan, bounds: SpanBounds): MappedSpan {
  const bad = malformed(span);
  if (bad !== null) return { invalid: bad };
  const reading = readSpan(span);
  const { input: inputTokens, output: outputTokens, model } = reading;
  const explicitCost = first(span, 'gen_ai.usage.cost');
  const version = number(first(span, 'skill.version'));
  const mcp = mcpServer(span);
  const skill = skillRef(span);
  const category = categoryOf(reading, skill !== null);
  // Only a tool call's request pairs it with the other side of the call (store/call-pairs.ts).
  const request = category === 'tool_call' ? mcpRequest(span) : null;
  const workspace = text(span.resource.get('workspace.id') ?? null);
  const fields: SpanFields = {
    trace_id: span.traceId,
    span_id: span.spanId,
    parent_span_id: span.parentSpanId,
    name: span.name,
    start_s: Number(span.startNs / 1_000_000_000n),
    duration_ms: Number(span.endNs - span.startNs) / 1e6,
    category,
    harness: text(span.resource.get('service.name') ?? null) ?? text(first(span, 'harness.name')),
    skill_version: Number.isSafeInteger(version) && version > 0 && version <= MAX_VERSION ? version : null,
    command: text(first(span, 'command.name')),
    mcp,
    tool: reading.tool,
    model,
    user: text(first(span, 'user.id', 'enduser.id')),
    session: text(first(span, 'session.id', 'gen_ai.conversation.id', 'mcp.session.id')),
    tokens: Math.round(inputTokens + outputTokens),
    cost:
      explicitCost !== null
        ? number(explicitCost)
        : priceOf(model, inputTokens, outputTokens, { read: reading.cacheRead, write: reading.cacheCreation }),
    is_error: span.statusCode === 2 || reading.error,
    provider: reading.provider,
    cache_read_tokens: Math.round(reading.cacheRead),
    cache_creation_tokens: Math.round(reading.cacheCreation),
    mcp_request: request === null ? null : JSON.stringify([request.session, request.id]),
    mcp_side: request?.side ?? null,
  };
  const agent = { id: text(first(span, 'gen_ai.agent.id')), name: text(first(span, 'gen_ai.agent.name')) };
  const claims = [
    skill === null ? null : 'id' in skill ? skill.id : skill.name,
    workspace,
    agent.id,
    agent.name,
    request?.session ?? null,
    request?.id ?? null,
  ];
  const counts = [inputTokens, outputTokens, reading.cacheRead, reading.cacheCreation];
  const why = outOfBounds(fields, claims, counts, bounds);
  return why !== null
    ? { invalid: why }
    : { invalid: null, fields, workspace: workspace === '' ? null : workspace, skill, agent };
}
