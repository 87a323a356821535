/**
 * Mapped spans as columns, the form they cross from the decode threads to the event loop in: one
 * array per field instead of one object per span, so that receiving 10,000 spans costs the event
 * loop a few milliseconds of deserializing instead of tens (DESIGN §12: no large synchronous work).
 */
import { SPAN_FIELDS, type SpanColumns } from '../store/trace-port.ts';
import type { MappedSpan, SpanFields } from './traces/mapping.ts';

/** The SpanRow fields a decode thread maps (organization, workspace, skill and agent are settled by ingest). */
const FIELDS = SPAN_FIELDS.filter(
  (f): f is keyof SpanFields => f !== 'org_id' && f !== 'workspace_id' && f !== 'skill' && f !== 'agent',
);

type Columns = { [K in keyof SpanFields]: (SpanFields[K] | null)[] };

/** Spans i = 0..length-1: the reason span i is refused (null when it is not), its claims and fields. */
export interface SpanBatch {
  length: number;
  invalid: (string | null)[];
  /** Resource `workspace.id`. */
  workspace: (string | null)[];
  skillId: (string | null)[];
  skillName: (string | null)[];
  /** `gen_ai.agent.id` and `gen_ai.agent.name`. */
  agentId: (string | null)[];
  agentName: (string | null)[];
  columns: Columns;
}

export function toBatch(spans: readonly MappedSpan[]): SpanBatch {
  const columns = Object.fromEntries(FIELDS.map((f) => [f, new Array<unknown>(spans.length).fill(null)])) as Columns;
  const batch: SpanBatch = {
    length: spans.length,
    invalid: new Array<string | null>(spans.length).fill(null),
    workspace: new Array<string | null>(spans.length).fill(null),
    skillId: new Array<string | null>(spans.length).fill(null),
    skillName: new Array<string | null>(spans.length).fill(null),
    agentId: new Array<string | null>(spans.length).fill(null),
    agentName: new Array<string | null>(spans.length).fill(null),
    columns,
  };
  spans.forEach((s, i) => {
    if (s.invalid !== null) {
      batch.invalid[i] = s.invalid;
      return;
    }
    batch.workspace[i] = s.workspace;
    batch.agentId[i] = s.agent.id;
    batch.agentName[i] = s.agent.name;
    if (s.skill !== null) {
      if ('id' in s.skill) batch.skillId[i] = s.skill.id;
      else batch.skillName[i] = s.skill.name;
    }
    for (const f of FIELDS) (columns[f] as unknown[])[i] = s.fields[f];
  });
  return batch;
}

/**
 * The columns to store: spans `kept` (indexes of valid spans, ascending) with the context ingestion
 * resolved for each. Column arrays are reused as they are when every span is kept.
 */
export function keptColumns(
  batch: SpanBatch,
  kept: readonly number[],
  ctx: { orgId: string; workspaceIds: string[]; skills: (string | null)[]; agents: (string | null)[] },
): SpanColumns {
  const all = kept.length === batch.length;
  const pick = (column: readonly unknown[]): unknown[] => (all ? (column as unknown[]) : kept.map((i) => column[i]));
  const c = batch.columns;
  return {
    length: kept.length,
    columns: {
      org_id: new Array<string>(kept.length).fill(ctx.orgId),
      workspace_id: ctx.workspaceIds,
      skill: ctx.skills,
      agent: ctx.agents,
      // Kept spans are valid: none of their cells holds the placeholder null of a refused span.
      ...(Object.fromEntries(FIELDS.map((f) => [f, pick(c[f])])) as unknown as {
        [K in (typeof FIELDS)[number]]: SpanFields[K][];
      }),
    },
  };
}
