/**
 * DESIGN §9's attribute mapping and span categories: span attributes first, then resource
 * attributes. Skill names are resolved to ids by the caller (ingest.ts), which knows the scope.
 */
import type { SpanCategory, SpanRow } from '../store/trace-port.ts';
import type { Attributes, AttrValue, DecodedSpan } from './otlp-decode.ts';
import { priceOf } from './prices.ts';

const ID = /^[0-9a-f]+$/;

function first(span: DecodedSpan, ...keys: string[]): AttrValue {
  for (const source of [span.attributes, span.resource] as Attributes[]) {
    for (const k of keys) {
      const v = source.get(k);
      if (v !== undefined && v !== null && v !== '') return v;
    }
  }
  return null;
}

const text = (v: AttrValue): string | null => (v === null ? null : String(v));
const number = (v: AttrValue): number => (typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : 0);

const MODEL_OPS = new Set(['chat', 'text_completion', 'generate_content', 'embeddings']);

export function categoryOf(span: DecodedSpan, hasSkill: boolean): SpanCategory {
  const op = text(span.attributes.get('gen_ai.operation.name') ?? null);
  if (op === 'invoke_skill' || (op === null && hasSkill)) return 'skill_invocation';
  if (op === 'execute_tool' || span.attributes.get('mcp.method.name') === 'tools/call') return 'tool_call';
  if (op !== null && MODEL_OPS.has(op)) return 'model_call';
  return 'other';
}

/** What a span says about its skill before resolution: an id, a name, or nothing. */
export function skillRef(span: DecodedSpan): { id: string } | { name: string } | null {
  const id = text(first(span, 'skill.id', 'gen_ai.skill.id'));
  if (id !== null) return { id };
  const name = text(first(span, 'skill.name', 'gen_ai.skill.name'));
  return name === null ? null : { name };
}

/** Why a span is rejected, or null when it can be stored. */
export function invalidSpan(span: DecodedSpan): string | null {
  if (span.traceId.length !== 32 || !ID.test(span.traceId) || /^0+$/.test(span.traceId)) return 'invalid trace_id';
  if (span.spanId.length !== 16 || !ID.test(span.spanId) || /^0+$/.test(span.spanId)) return 'invalid span_id';
  if (span.startNs <= 0n || span.endNs < span.startNs) return 'invalid start or end time';
  return null;
}

/** Versions are 32-bit integers in both stores; a larger one is treated as absent. */
const MAX_VERSION = 2 ** 31 - 1;

/** Why a mapped row cannot be stored (a value outside the stores' ranges), or null. */
export function invalidRow(row: SpanRow): string | null {
  if (!Number.isSafeInteger(row.tokens) || row.tokens < 0) return 'token counts out of range';
  if (!Number.isFinite(row.cost)) return 'cost out of range';
  return null;
}

export interface MappingContext {
  orgId: string;
  workspaceId: string;
  /** The resolved skill id (null when the span names none or the name is unknown). */
  skillId: string | null;
}

export function toSpanRow(span: DecodedSpan, ctx: MappingContext): SpanRow {
  const inputTokens = number(first(span, 'gen_ai.usage.input_tokens'));
  const outputTokens = number(first(span, 'gen_ai.usage.output_tokens'));
  const model = text(first(span, 'gen_ai.response.model')) ?? text(first(span, 'gen_ai.request.model'));
  const explicitCost = first(span, 'gen_ai.usage.cost');
  const version = first(span, 'skill.version');
  const mcp = text(first(span, 'mcp.server.name')) ?? (span.attributes.has('mcp.method.name') ? text(first(span, 'server.address')) : null);
  const hasSkill = skillRef(span) !== null;
  return {
    org_id: ctx.orgId,
    workspace_id: ctx.workspaceId,
    trace_id: span.traceId,
    span_id: span.spanId,
    parent_span_id: span.parentSpanId,
    name: span.name,
    start_s: Number(span.startNs / 1_000_000_000n),
    duration_ms: Number(span.endNs - span.startNs) / 1e6,
    category: categoryOf(span, hasSkill),
    harness: text(span.resource.get('service.name') ?? null) ?? text(first(span, 'harness.name')),
    skill: ctx.skillId,
    skill_version: Number.isSafeInteger(number(version)) && number(version) > 0 && number(version) <= MAX_VERSION ? number(version) : null,
    command: text(first(span, 'command.name')),
    mcp,
    tool: text(first(span, 'gen_ai.tool.name')),
    model,
    user: text(first(span, 'user.id', 'enduser.id')),
    session: text(first(span, 'session.id', 'gen_ai.conversation.id')),
    tokens: Math.round(inputTokens + outputTokens),
    cost: explicitCost !== null ? number(explicitCost) : priceOf(model, inputTokens, outputTokens),
    is_error: span.statusCode === 2 || first(span, 'error.type') !== null,
  };
}
