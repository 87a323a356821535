/**
 * The default field resolver of the subgraph. Domain values keep the REST field names
 * (snake_case), so a camelCase field reads `source.field`, else `source.snake_case`, else (for
 * artifacts, whose kind-specific fields live in the stored document) `source.doc.snake_case`.
 * Explicit resolvers exist only for computed fields and edges.
 */
import { isObjectType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';

const snakeNames = new Map<string, string>();

function snake(name: string): string {
  let s = snakeNames.get(name);
  if (s === undefined) {
    s = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    snakeNames.set(name, s);
  }
  return s;
}

/** The value of field `name` of `source`: by its own name, its snake_case name, or that name in `doc`. */
function readField(source: unknown, name: string, key: string): unknown {
  if (source === null || typeof source !== 'object') return undefined;
  const record = source as Record<string, unknown>;
  if (record[name] !== undefined) return record[name];
  if (record[key] !== undefined) return record[key];
  const doc = record.doc;
  return doc !== null && typeof doc === 'object' ? (doc as Record<string, unknown>)[key] : undefined;
}

/** Resolves a field by its own name, its snake_case name, or its snake_case name in `doc`. */
export const snakeCaseFieldResolver: GraphQLFieldResolver<unknown, unknown> = (source, _args, _ctx, info) =>
  readField(source, info.fieldName, snake(info.fieldName));

/**
 * Gives every field of `schema` without a resolver the same reading as `snakeCaseFieldResolver`,
 * as its own resolver (in place, once): an executor without a default-resolver option (the
 * compiled one, executor.ts) then resolves those fields exactly as graphql-js does.
 */
export function resolveUnresolvedFields(schema: GraphQLSchema): void {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (field.resolve !== undefined) continue;
      const name = field.name;
      const key = snake(name);
      field.resolve = (source) => readField(source, name, key);
    }
  }
}
