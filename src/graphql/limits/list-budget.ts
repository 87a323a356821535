/**
 * The execution backstop of the cost limit (DESIGN §12). Lists without a page argument (a
 * workspace's children, subtree, projects and members, the viewer's workspaces, versions, usedBy,
 * usedTools, usedSkills, relationships…) have lengths that depend on the data, which the static
 * analysis can only estimate: nested `subtree { subtree { subtree … } } }` really holds S^n items.
 * Each request gets a budget of items those lists may hand out, as large as the cost limit;
 * once spent, the next such list fails with OPERATION_TOO_LARGE (HTTP 400) instead of growing
 * the answer.
 *
 * The budget is installed on the schema's fields once, at startup (budgetUnpagedLists): only
 * those fields get a wrapper, every other field resolves as before and costs nothing more.
 */
import {
  GraphQLError,
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  isObjectType,
  type GraphQLFieldResolver,
  type GraphQLSchema,
} from 'graphql';

/** The error code of a request whose lists outgrow its budget. */
export const OPERATION_TOO_LARGE = 'OPERATION_TOO_LARGE';

/**
 * Unpaged lists whose length is known before execution, so the static analysis prices them
 * exactly: federation `_entities` (its representations), the insight schemas (a fixed set), and
 * the lists inside a trace statistics answer (priced by its points).
 */
const PRICED_STATICALLY = new Set(['Query._entities', 'Query.insightSchemas']);
const PRICED_TYPES = new Set(['ScalarStats', 'TableStats', 'TimeSeriesStats', 'StatsSeries', 'TraceStatsMeta']);

interface Budget {
  spent: number;
  readonly max: number;
}

const budgets = new WeakMap<object, Budget>();

/** Opens the list budget of one request (its context value), `max` items. */
export function openListBudget(context: object, max: number): void {
  budgets.set(context, { spent: 0, max });
}

function spend(context: unknown, list: unknown): unknown {
  if (!Array.isArray(list) || typeof context !== 'object' || context === null) return list;
  const budget = budgets.get(context);
  if (budget === undefined) return list;
  budget.spent += list.length;
  if (budget.spent > budget.max) {
    throw new GraphQLError(
      `this operation's lists hold more than ${budget.max} items; ask for less (fewer nested lists or aliases)`,
      {
        extensions: {
          code: OPERATION_TOO_LARGE,
          http: { status: 400 },
          limit: 'items',
          value: budget.spent,
          max: budget.max,
        },
      },
    );
  }
  return list;
}

/** Spends the budget for the items of a list a scalar field carries (a JSON answer's list). */
export function spendListItems(context: unknown, items: readonly unknown[]): void {
  spend(context, items);
}

function budgeted(resolve: GraphQLFieldResolver<unknown, unknown>): GraphQLFieldResolver<unknown, unknown> {
  return (source, args, context, info) => {
    const result = resolve(source, args, context, info);
    return result instanceof Promise ? result.then((list) => spend(context, list)) : spend(context, result);
  };
}

/** The `Type.field` of every list of objects without a `first` argument whose length depends on the data. */
export function unpagedLists(schema: GraphQLSchema): string[] {
  const found: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__') || PRICED_TYPES.has(type.name)) continue;
    for (const field of Object.values(type.getFields())) {
      const coordinate = `${type.name}.${field.name}`;
      if (!isListType(getNullableType(field.type)) || !isCompositeType(getNamedType(field.type))) continue;
      if (field.args.some((a) => a.name === 'first') || PRICED_STATICALLY.has(coordinate)) continue;
      if (type.name.endsWith('Connection') && (field.name === 'edges' || field.name === 'nodes')) continue;
      found.push(coordinate);
    }
  }
  return found;
}

/**
 * Makes every unpaged list of `schema` spend the request's budget (the schema is changed in place,
 * once); `fallback` resolves the fields that have no resolver of their own.
 */
export function budgetUnpagedLists(schema: GraphQLSchema, fallback: GraphQLFieldResolver<unknown, unknown>): void {
  for (const coordinate of unpagedLists(schema)) {
    const [typeName, fieldName] = coordinate.split('.') as [string, string];
    const field = (
      schema.getType(typeName) as { getFields(): Record<string, { resolve?: GraphQLFieldResolver<unknown, unknown> }> }
    ).getFields()[fieldName];
    if (field !== undefined) field.resolve = budgeted(field.resolve ?? fallback);
  }
}
