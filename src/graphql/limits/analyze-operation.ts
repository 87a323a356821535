/**
 * Static analysis of one operation for the operation limits (DESIGN §12): selection depth, number
 * of aliases, and the cost of the answer, with fragments expanded and arguments coerced by
 * graphql-js exactly as execution will coerce them (literals, sent variables, variable defaults,
 * schema defaults).
 *
 * Cost model: an object costs 1, a scalar 0; a list costs its length times its item's cost, where
 * the length is what the field will really serve:
 * - a paged field (`first`): its connection's `edges`/`nodes` have the page the handler serves for
 *   that `first` (page-sizes.ts: default when absent or null, clamped to the field's maximum);
 * - `_entities`: the number of representations;
 * - introspection lists: their sizes in this schema (introspection-sizes.ts);
 * - any other list: `defaultListSize`, an estimate (their lengths depend on the data; the list
 *   budget of list-budget.ts enforces the real total at execution).
 * `Skill.traceStats` and `Agent.traceStats` cost the points of their answer (queries × groups ×
 * buckets, ×2 with compare), 1 when the input is invalid (execution then reports why). The fields that carry a published
 * document (FIELD_WEIGHTS) weigh more, by the bytes they may hold.
 *
 * Trace-store work: the distinct `since` windows of every `Tool.usage` in the operation, and whether
 * it selects `McpServer.usage` (one fixed window), which trace-budget.ts prices before anything
 * executes (lookups of one window share one pass, so the windows, not the tools, are the work). `traceStats` work is spent at execution, where the number
 * of skills is known (this analysis only estimates unpaged lists).
 *
 * Introspection counts for aliases and cost but not for depth: its nesting is the schema's
 * (standard introspection queries are 15 levels deep), and its fan-out is priced.
 *
 * The walk recurses once per level of fields and fragments; an operation whose named fragments
 * expand past MAX_LEVELS levels (the text itself nests at most MAX_NESTING) is measured as that
 * deep and refused for its depth, without walking further.
 */
import {
  getArgumentValues,
  getNamedType,
  getNullableType,
  getVariableValues,
  isCompositeType,
  isListType,
  Kind,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { TraceStatsInput } from '../../generated/graphql.ts';
import { answerPoints } from '../../skills/stats-request.ts';
import { toTraceStatsRequest } from '../trace-stats-input.ts';
import { introspectionSizes, metaField, type IntrospectionSizes, type MetaScope } from './introspection-sizes.ts';
import { MAX_NESTING } from './nesting.ts';
import { BOUNDED_LISTS, pageSizeFor } from './page-sizes.ts';

/** Levels of fields and fragments the walk follows, introspection included. */
export const MAX_LEVELS = MAX_NESTING;

/** What analyzeOperation measures. */
export interface OperationCost {
  depth: number;
  aliases: number;
  cost: number;
  /** The distinct `since` of the operation's `Tool.usage` fields (null: no window). */
  usageWindows: (number | null)[];
  /** Whether the operation selects `McpServer.usage` (its window is fixed). */
  serverUsage: boolean;
}

/** The parameters of the cost estimate. */
export interface CostModel {
  /** Estimated length of a list that no argument bounds and whose length depends on the data. */
  defaultListSize: number;
}

/** Where a selection set is, beyond its type. */
interface Scope {
  type: GraphQLCompositeType;
  /** The page of a connection, for its `edges` and `nodes`. */
  page?: number;
  /** Inside introspection: where (see introspection-sizes.ts). */
  meta?: MetaScope;
}

interface Measure {
  depth: number;
  cost: number;
}

interface Walk {
  schema: GraphQLSchema;
  operation: OperationDefinitionNode;
  fragments: Map<string, FragmentDefinitionNode>;
  rawVariables: Record<string, unknown>;
  variables?: Record<string, unknown>;
  sizes?: IntrospectionSizes;
  model: CostModel;
  aliases: number;
  /** Set when the operation expands past MAX_LEVELS. */
  tooDeep: boolean;
  /** Fragments already measured in a scope: a fragment spread N times is walked once. */
  memo: Map<string, Measure & { aliases: number }>;
  usageWindows: Set<number | null>;
  serverUsage: boolean;
}

/** The operation's variables as execution coerces them (defaults applied); none when invalid (execution refuses). */
function variablesOf(w: Walk): Record<string, unknown> {
  if (w.variables === undefined) {
    const coerced = getVariableValues(w.schema, w.operation.variableDefinitions ?? [], w.rawVariables, {
      maxErrors: 1,
    });
    w.variables = coerced.coerced ?? {};
  }
  return w.variables;
}

/** The field's arguments as its resolver will get them; none when they do not coerce (execution reports it). */
function argumentsOf(w: Walk, def: GraphQLField<unknown, unknown>, node: FieldNode): Record<string, unknown> {
  try {
    return getArgumentValues(def, node, variablesOf(w));
  } catch {
    return {};
  }
}

function fieldDef(w: Walk, parent: GraphQLCompositeType, name: string): GraphQLField<unknown, unknown> | undefined {
  if (name === '__typename') return TypeNameMetaFieldDef;
  if (parent === w.schema.getQueryType()) {
    if (name === '__schema') return SchemaMetaFieldDef;
    if (name === '__type') return TypeMetaFieldDef;
  }
  return 'getFields' in parent ? parent.getFields()[name] : undefined;
}

/** The fields answering operation 1: priced by the points of their answer. */
const TRACE_STATS_FIELDS = new Set(['Skill.traceStats', 'Agent.traceStats']);

function traceStatsPoints(args: Record<string, unknown>): number {
  try {
    return Math.max(1, answerPoints(toTraceStatsRequest(args.input as TraceStatsInput)));
  } catch {
    return 1;
  }
}

/**
 * Fields that serve a document a caller published (a server.json holds up to 32 KiB, the publish
 * bound), so the budget bounds the bytes an answer can carry and not only its objects: the whole
 * document adds one unit per KiB; a list of its parts adds its weight to each item. The SDL says the
 * same with `@cost` (a router's estimate then agrees: test/federation/cost-agreement.test.ts).
 */
const FIELD_WEIGHTS: Readonly<Record<string, number>> = {
  'McpServer.server': 32,
  'McpServer.packages': 3,
  'McpServer.remotes': 3,
};

function walkField(w: Walk, sel: FieldNode, scope: Scope, level: number): Measure {
  if (sel.alias !== undefined) w.aliases++;
  const name = sel.name.value;
  const def = fieldDef(w, scope.type, name);
  if (def === undefined) return { depth: 0, cost: 0 };
  const named = getNamedType(def.type);
  const coordinate = `${scope.type.name}.${name}`;
  const weight = FIELD_WEIGHTS[coordinate] ?? 0;
  if (!isCompositeType(named) || sel.selectionSet === undefined) return { depth: scope.meta ? 0 : 1, cost: weight };
  const isList = isListType(getNullableType(def.type));
  const child: Scope = { type: named };
  let size = 1;
  if (scope.meta !== undefined || name === '__schema' || name === '__type') {
    w.sizes ??= introspectionSizes(w.schema);
    const meta = metaField(w.sizes, scope.meta, coordinate, name, isList);
    size = meta.size;
    child.meta = meta.meta;
  } else if (scope.page !== undefined && (name === 'edges' || name === 'nodes')) {
    size = scope.page;
  } else if (def.args.some((a) => a.name === 'first')) {
    const page = pageSizeFor(coordinate, argumentsOf(w, def, sel).first);
    if (isList) size = page;
    else child.page = page;
  } else if (name === '_entities') {
    const reps = argumentsOf(w, def, sel).representations;
    size = Array.isArray(reps) ? reps.length : 0;
  } else if (isList) {
    size = BOUNDED_LISTS[coordinate] ?? w.model.defaultListSize;
  }
  const inner = walkSet(w, sel.selectionSet, child, level + 1);
  const depth = (child.meta ? 0 : 1) + inner.depth;
  if (TRACE_STATS_FIELDS.has(coordinate)) return { depth, cost: traceStatsPoints(argumentsOf(w, def, sel)) };
  if (coordinate === 'McpServer.usage') w.serverUsage = true;
  if (coordinate === 'Tool.usage') {
    const since = argumentsOf(w, def, sel).since;
    w.usageWindows.add(typeof since === 'number' ? since : null);
  }
  return { depth, cost: size * (1 + weight + inner.cost) };
}

function walkFragment(w: Walk, name: string, scope: Scope, level: number): Measure {
  const fragment = w.fragments.get(name);
  if (fragment === undefined) return { depth: 0, cost: 0 };
  const key = `${name}|${scope.page ?? ''}|${scope.meta ? `${scope.meta.all}:${scope.meta.wrapLeft}` : ''}`;
  const known = w.memo.get(key);
  if (known !== undefined) {
    w.aliases += known.aliases;
    return known;
  }
  const type = w.schema.getType(fragment.typeCondition.name.value);
  const before = w.aliases;
  const found =
    type !== undefined && isCompositeType(type)
      ? walkSet(w, fragment.selectionSet, { ...scope, type }, level + 1)
      : { depth: 0, cost: 0 };
  w.memo.set(key, { ...found, aliases: w.aliases - before });
  return found;
}

function walkSet(w: Walk, set: SelectionSetNode, scope: Scope, level: number): Measure {
  if (level > MAX_LEVELS) {
    w.tooDeep = true;
    return { depth: 0, cost: 0 };
  }
  let depth = 0;
  let cost = 0;
  for (const sel of set.selections) {
    let found: Measure;
    if (sel.kind === Kind.FIELD) {
      found = walkField(w, sel, scope, level);
    } else if (sel.kind === Kind.FRAGMENT_SPREAD) {
      found = walkFragment(w, sel.name.value, scope, level);
    } else {
      const type = sel.typeCondition === undefined ? scope.type : w.schema.getType(sel.typeCondition.name.value);
      found =
        type !== undefined && isCompositeType(type)
          ? walkSet(w, sel.selectionSet, { ...scope, type }, level + 1)
          : { depth: 0, cost: 0 };
    }
    depth = Math.max(depth, found.depth);
    cost += found.cost;
  }
  return { depth, cost };
}

/**
 * Depth, aliases and cost of `operation` with `variables` as sent. Runs once per operation, after
 * validation (the document is valid for `schema`), before anything executes.
 */
export function analyzeOperation(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: readonly FragmentDefinitionNode[],
  variables: Record<string, unknown>,
  model: CostModel,
): OperationCost {
  const root = schema.getRootType(operation.operation);
  if (root === undefined || root === null)
    return { depth: 0, aliases: 0, cost: 0, usageWindows: [], serverUsage: false };
  const w: Walk = {
    schema,
    operation,
    fragments: new Map(fragments.map((f) => [f.name.value, f])),
    rawVariables: variables,
    model,
    aliases: 0,
    tooDeep: false,
    memo: new Map(),
    usageWindows: new Set(),
    serverUsage: false,
  };
  const { depth, cost } = walkSet(w, operation.selectionSet, { type: root }, 0);
  // Introspection averages are fractions: a whole number, without float noise (4486.999… is 4487).
  return {
    depth: w.tooDeep ? Math.max(depth, MAX_LEVELS + 1) : depth,
    aliases: w.aliases,
    cost: Math.ceil(cost - 1e-6),
    usageWindows: [...w.usageWindows],
    serverUsage: w.serverUsage,
  };
}
