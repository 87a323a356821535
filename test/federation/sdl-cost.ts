/**
 * A router's static cost estimate of an operation, from the SDL's `@cost` and `@listSize` alone:
 * demand control as the IBM GraphQL Cost Directive specification describes it and Apollo Router
 * (`static_estimated`) and Hive Router compute it. Written here from the specification, to check
 * that our directives make a router's estimate agree with our own cost model.
 *
 * - A field costs `instances × (weight + its selection) + its arguments`.
 * - `weight`: the field's `@cost(weight:)`, else its type's, else 1 for an object, interface or
 *   union, 0 for a leaf.
 * - `instances`: 1 for a field that is not a list; for a list, the size an ancestor's
 *   `@listSize(sizedFields:)` gave it, else its own `@listSize` (the largest slicing argument sent,
 *   else `assumedSize`), else the router's default list size. `_entities` counts the
 *   representations (the entities a router's fetch sends).
 * - Arguments: an input object costs 1 plus its fields, a list the sum of its items, a leaf 0;
 *   an argument's or input field's `@cost(weight:)` replaces the 1 or 0 (on a list: once, and on
 *   each item). `null` costs 0.
 * - Fragments add up; `__typename` costs 0.
 */
import {
  getNamedType,
  getNullableType,
  isCompositeType,
  isInputObjectType,
  isListType,
  Kind,
  OperationTypeNode,
  valueFromASTUntyped,
  type ConstDirectiveNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLArgument,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLSchema,
  type SelectionSetNode,
  parse,
  getOperationAST,
} from 'graphql';

/** The list size a router assumes for a list no directive sizes (Apollo Router's `list_size`). */
const ROUTER_DEFAULT_LIST_SIZE = 10;

interface Ctx {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
}

type Directed = { astNode?: { directives?: readonly ConstDirectiveNode[] | undefined } | null | undefined };

function directive(element: Directed, name: string): ConstDirectiveNode | undefined {
  return element.astNode?.directives?.find((d) => d.name.value === name);
}

function directiveArg(d: ConstDirectiveNode | undefined, name: string): unknown {
  const arg = d?.arguments?.find((a) => a.name.value === name);
  return arg === undefined ? undefined : valueFromASTUntyped(arg.value);
}

/** The `@cost(weight:)` of a field, argument or input field, if it has one. */
function weightOf(element: Directed): number | undefined {
  const weight = directiveArg(directive(element, 'cost'), 'weight');
  return typeof weight === 'number' ? weight : undefined;
}

function scoreValue(value: unknown, def: GraphQLArgument | GraphQLInputField): number {
  if (value === null || value === undefined) return 0;
  const weight = weightOf(def);
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + scoreValue(item, def), weight ?? 0);
  const named = getNamedType(def.type);
  if (isInputObjectType(named) && typeof value === 'object') {
    const fields = named.getFields();
    let cost = weight ?? 1;
    for (const [key, inner] of Object.entries(value)) {
      const field = fields[key];
      if (field !== undefined) cost += scoreValue(inner, field);
    }
    return cost;
  }
  return weight ?? 0;
}

function argValue(ctx: Ctx, node: FieldNode, name: string): unknown {
  const arg = node.arguments?.find((a) => a.name.value === name);
  return arg === undefined ? undefined : valueFromASTUntyped(arg.value, ctx.variables);
}

/** The size a field's own `@listSize` gives: the largest slicing argument sent, else `assumedSize`. */
function expectedSize(ctx: Ctx, def: GraphQLField<unknown, unknown>, node: FieldNode): number | undefined {
  const d = directive(def, 'listSize');
  if (d === undefined) return undefined;
  const slicing = (directiveArg(d, 'slicingArguments') as string[] | undefined) ?? [];
  const sent = slicing.map((name) => argValue(ctx, node, name)).filter((v): v is number => typeof v === 'number');
  if (sent.length > 0) return Math.max(...sent);
  const assumed = directiveArg(d, 'assumedSize');
  return typeof assumed === 'number' ? assumed : undefined;
}

function scoreField(
  ctx: Ctx,
  node: FieldNode,
  parent: GraphQLCompositeType,
  sized: ReadonlyMap<string, number>,
): number {
  const name = node.name.value;
  if (name === '__typename' || !('getFields' in parent)) return 0;
  const def = parent.getFields()[name];
  if (def === undefined) throw new Error(`no field ${parent.name}.${name}`);
  const own = expectedSize(ctx, def, node);
  let instances = 1;
  if (isListType(getNullableType(def.type))) {
    if (name === '_entities') {
      const reps = argValue(ctx, node, 'representations');
      instances = Array.isArray(reps) ? reps.length : 0;
    } else {
      instances = sized.get(name) ?? own ?? ROUTER_DEFAULT_LIST_SIZE;
    }
  }
  const named = getNamedType(def.type);
  let typeCost = weightOf(def) ?? weightOf(named) ?? (isCompositeType(named) ? 1 : 0);
  if (node.selectionSet !== undefined && isCompositeType(named)) {
    const sizedFields = (directiveArg(directive(def, 'listSize'), 'sizedFields') as string[] | undefined) ?? [];
    const childSized = new Map(own === undefined ? [] : sizedFields.map((f) => [f, own] as const));
    typeCost += scoreSet(ctx, node.selectionSet, named, childSized);
  }
  let args = 0;
  for (const arg of node.arguments ?? []) {
    const argDef = def.args.find((a) => a.name === arg.name.value);
    if (argDef !== undefined) args += scoreValue(valueFromASTUntyped(arg.value, ctx.variables), argDef);
  }
  return instances * typeCost + args;
}

function scoreSet(
  ctx: Ctx,
  set: SelectionSetNode,
  type: GraphQLCompositeType,
  sized: ReadonlyMap<string, number>,
): number {
  let cost = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      cost += scoreField(ctx, sel, type, sized);
    } else {
      const fragment = sel.kind === Kind.FRAGMENT_SPREAD ? ctx.fragments.get(sel.name.value) : sel;
      if (fragment === undefined) continue;
      const on = fragment.typeCondition === undefined ? type : ctx.schema.getType(fragment.typeCondition.name.value);
      if (on !== undefined && isCompositeType(on)) cost += scoreSet(ctx, fragment.selectionSet, on, sized);
    }
  }
  return cost;
}

/** The static estimate of `query` (one query or mutation operation) with `variables`, on `schema`'s directives. */
export function sdlEstimate(schema: GraphQLSchema, query: string, variables: Record<string, unknown> = {}): number {
  const doc = parse(query);
  const operation = getOperationAST(doc);
  const root = operation?.operation === OperationTypeNode.MUTATION ? schema.getMutationType() : schema.getQueryType();
  if (!operation || !root) throw new Error('no query or mutation operation');
  const fragments = new Map(
    doc.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((f) => [f.name.value, f]),
  );
  return scoreSet({ schema, fragments, variables }, operation.selectionSet, root, new Map());
}
