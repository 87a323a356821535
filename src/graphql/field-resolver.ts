/**
 * The default field resolver of the subgraph. Domain values keep the REST field names
 * (snake_case), so a camelCase field reads `source.field`, else `source.snake_case`, else (for
 * artifacts, whose kind-specific fields live in the stored document) `source.doc.snake_case`.
 * Explicit resolvers exist only for computed fields and edges.
 */
import type { GraphQLFieldResolver } from 'graphql';
import { docMember } from '../store/sql-rows.ts';

const snakeNames = new Map<string, string>();

function snake(name: string): string {
  let s = snakeNames.get(name);
  if (s === undefined) {
    s = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    snakeNames.set(name, s);
  }
  return s;
}

/** Resolves a field by its own name, its snake_case name, or its snake_case name in `doc`. */
export const snakeCaseFieldResolver: GraphQLFieldResolver<unknown, unknown> = (source, _args, _ctx, info) => {
  if (source === null || typeof source !== 'object') return undefined;
  const record = source as Record<string, unknown>;
  const name = info.fieldName;
  if (record[name] !== undefined) return record[name];
  const key = snake(name);
  if (record[key] !== undefined) return record[key];
  return docMember(record, key);
};
