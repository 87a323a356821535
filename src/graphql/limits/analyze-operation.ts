/**
 * Static analysis of one operation for the operation limits: selection depth, number of aliases,
 * and an estimated cost. Cost model: a field of an object type costs 1, a scalar 0; a list costs
 * its expected length times its item cost, where the length is the `first` argument (clamped to
 * the largest page), the number of `_entities` representations, or a default for other lists.
 * Lists directly inside a connection (`edges`, `nodes`) take the connection's length.
 */
import {
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  Kind,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';

/** What analyzeOperation measures. */
export interface OperationCost {
  depth: number;
  aliases: number;
  cost: number;
}

/** The parameters of the cost estimate. */
export interface CostModel {
  /** Expected length of a list with no size argument. */
  defaultListSize: number;
  /** Largest page a `first` argument can ask for (handlers clamp to this). */
  maxPageSize: number;
}

interface Walk {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
  model: CostModel;
  aliases: number;
}

function argumentValue(node: ValueNode | undefined, variables: Record<string, unknown>): unknown {
  if (node === undefined) return undefined;
  if (node.kind === Kind.VARIABLE) return variables[node.name.value];
  if (node.kind === Kind.INT) return Number(node.value);
  if (node.kind === Kind.LIST) return node.values;
  return undefined;
}

function listSize(w: Walk, fieldName: string, args: Map<string, ValueNode>): number {
  if (fieldName === '_entities') {
    const reps = argumentValue(args.get('representations'), w.variables);
    return Array.isArray(reps) ? reps.length : w.model.defaultListSize;
  }
  const first = argumentValue(args.get('first'), w.variables);
  return typeof first === 'number' && first >= 0 ? Math.min(first, w.model.maxPageSize) : w.model.defaultListSize;
}

function walk(w: Walk, set: SelectionSetNode, parent: GraphQLCompositeType, inConnection: boolean): { depth: number; cost: number } {
  let depth = 0;
  let cost = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      if (sel.alias !== undefined) w.aliases++;
      const name = sel.name.value;
      if (name.startsWith('__')) continue;
      const field = 'getFields' in parent ? (parent.getFields()[name] as GraphQLField<unknown, unknown> | undefined) : undefined;
      if (field === undefined) continue;
      const named = getNamedType(field.type);
      const isList = isListType(getNullableType(field.type));
      const isConnection = named.name.endsWith('Connection');
      const args = new Map((sel.arguments ?? []).map((a) => [a.name.value, a.value]));
      const size = isConnection ? listSize(w, name, args) : isList && !inConnection ? listSize(w, name, args) : 1;
      const inner = sel.selectionSet && isCompositeType(named) ? walk(w, sel.selectionSet, named, isConnection) : { depth: 0, cost: 0 };
      depth = Math.max(depth, 1 + inner.depth);
      cost += isCompositeType(named) ? size * (1 + inner.cost) : 0;
    } else {
      const fragment = sel.kind === Kind.FRAGMENT_SPREAD ? w.fragments.get(sel.name.value) : sel;
      if (fragment === undefined) continue;
      const typeName = fragment.typeCondition?.name.value;
      const type = typeName === undefined ? parent : (w.schema.getType(typeName) as GraphQLCompositeType | undefined);
      if (type === undefined) continue;
      const inner = walk(w, fragment.selectionSet, type, inConnection);
      depth = Math.max(depth, inner.depth);
      cost += inner.cost;
    }
  }
  return { depth, cost };
}

/** Depth, aliases and estimated cost of `operation`, with fragments inlined and variables applied. */
export function analyzeOperation(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: readonly FragmentDefinitionNode[],
  variables: Record<string, unknown>,
  model: CostModel,
): OperationCost {
  const root = schema.getRootType(operation.operation);
  if (root === undefined || root === null) return { depth: 0, aliases: 0, cost: 0 };
  const w: Walk = { schema, fragments: new Map(fragments.map((f) => [f.name.value, f])), variables, model, aliases: 0 };
  const { depth, cost } = walk(w, operation.selectionSet, root, false);
  return { depth, aliases: w.aliases, cost };
}
