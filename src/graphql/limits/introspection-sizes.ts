/**
 * Sizes of the introspection lists (`__schema`, `__type`), from the schema itself, for the cost
 * analysis. Each list has two sizes:
 * - `all`: its average length over every element of the list it hangs from, used when that parent
 *   came from the enumeration of the whole schema (`__schema { types { fields { args } } }`).
 *   The analysis multiplies sizes down a selection, so averages give the exact total there:
 *   types × (Σfields / types) × (Σargs / Σfields) = Σargs.
 * - `one`: its largest length for any single element, for a parent reached any other way
 *   (`__type(name:)`, a field's `type`, `interfaces`, `possibleTypes`), where it is an upper bound.
 * `ofType` chains are bounded too: a named type has no `ofType`, and a field's or argument's type
 * wraps its named type at most `maxWrapping` times.
 */
import {
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  isUnionType,
  type GraphQLArgument,
  type GraphQLSchema,
  type GraphQLType,
} from 'graphql';

/** The length of one introspection list field, as seen from a parent of either origin. */
interface MetaListSize {
  all: number;
  one: number;
}

/** The introspection list sizes of one schema, by `__Type.field`, and its deepest type wrapping. */
export interface IntrospectionSizes {
  lists: ReadonlyMap<string, MetaListSize>;
  maxWrapping: number;
}

const cache = new WeakMap<GraphQLSchema, IntrospectionSizes>();

function wrapping(type: GraphQLType): number {
  return isListType(type) || isNonNullType(type) ? 1 + wrapping(type.ofType) : 0;
}

function size(total: number, parents: number, max: number): MetaListSize {
  return { all: parents === 0 ? 0 : total / parents, one: max };
}

function measure(schema: GraphQLSchema): IntrospectionSizes {
  const types = Object.values(schema.getTypeMap());
  const directives = schema.getDirectives();
  const sum = { fields: 0, args: 0, interfaces: 0, possible: 0, enumValues: 0, inputFields: 0, directiveArgs: 0 };
  const max = { ...sum };
  let maxWrapping = 0;
  const note = (key: keyof typeof sum, n: number) => {
    sum[key] += n;
    max[key] = Math.max(max[key], n);
  };
  const noteArgs = (args: readonly GraphQLArgument[], key: 'args' | 'directiveArgs') => {
    note(key, args.length);
    for (const arg of args) maxWrapping = Math.max(maxWrapping, wrapping(arg.type));
  };
  for (const type of types) {
    if (isObjectType(type) || isInterfaceType(type)) {
      const fields = Object.values(type.getFields());
      note('fields', fields.length);
      note('interfaces', type.getInterfaces().length);
      for (const field of fields) {
        noteArgs(field.args, 'args');
        maxWrapping = Math.max(maxWrapping, wrapping(field.type));
      }
    }
    if (isInterfaceType(type) || isUnionType(type)) note('possible', schema.getPossibleTypes(type).length);
    if (isEnumType(type)) note('enumValues', type.getValues().length);
    if (isInputObjectType(type)) {
      const fields = Object.values(type.getFields());
      note('inputFields', fields.length);
      for (const field of fields) maxWrapping = Math.max(maxWrapping, wrapping(field.type));
    }
  }
  for (const directive of directives) noteArgs(directive.args, 'directiveArgs');
  const t = types.length;
  return {
    maxWrapping,
    lists: new Map<string, MetaListSize>([
      ['__Schema.types', { all: t, one: t }],
      ['__Schema.directives', { all: directives.length, one: directives.length }],
      ['__Type.fields', size(sum.fields, t, max.fields)],
      ['__Type.interfaces', size(sum.interfaces, t, max.interfaces)],
      ['__Type.possibleTypes', size(sum.possible, t, max.possible)],
      ['__Type.enumValues', size(sum.enumValues, t, max.enumValues)],
      ['__Type.inputFields', size(sum.inputFields, t, max.inputFields)],
      ['__Field.args', size(sum.args, sum.fields, max.args)],
      ['__Directive.args', size(sum.directiveArgs, directives.length, max.directiveArgs)],
    ]),
  };
}

/** The introspection sizes of `schema`, measured once per schema. */
export function introspectionSizes(schema: GraphQLSchema): IntrospectionSizes {
  let found = cache.get(schema);
  if (found === undefined) {
    found = measure(schema);
    cache.set(schema, found);
  }
  return found;
}

/**
 * Where an introspection selection is: `all` when its parent came from the enumeration of the
 * whole schema, and how many `ofType` levels below it can still be non-null.
 */
export interface MetaScope {
  all: boolean;
  wrapLeft: number;
}

/**
 * The length of introspection field `coordinate` (`name` on its parent type; 1 for an object, 0
 * for an `ofType` past the deepest wrapping) seen from `parent`, and the scope of its items.
 */
export function metaField(
  sizes: IntrospectionSizes,
  parent: MetaScope = { all: false, wrapLeft: 0 },
  coordinate: string,
  name: string,
  isList: boolean,
): { size: number; meta: MetaScope } {
  if (name === 'ofType')
    return { size: parent.wrapLeft > 0 ? 1 : 0, meta: { all: false, wrapLeft: parent.wrapLeft - 1 } };
  const wrapLeft = name === 'type' ? sizes.maxWrapping : 0;
  if (!isList) return { size: 1, meta: { all: false, wrapLeft } };
  const list = sizes.lists.get(coordinate);
  const size = list === undefined ? 0 : parent.all ? list.all : list.one;
  // Items of the whole schema's lists, and of their fields, args and input fields, stay `all`.
  const all =
    coordinate === '__Schema.types' ||
    coordinate === '__Schema.directives' ||
    (parent.all && name !== 'interfaces' && name !== 'possibleTypes');
  return { size, meta: { all, wrapLeft } };
}
