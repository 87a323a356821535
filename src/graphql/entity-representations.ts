/**
 * Federation `_entities` input checked before @apollo/subgraph resolves it: every representation
 * must be an object naming one of this subgraph's entity types in `__typename` with its key `id`
 * as a string. Anything else is the client's mistake (422 `invalid_field` with the position),
 * never a 500 from deep inside the entity resolver.
 */
import type { GraphQLFieldResolver, GraphQLSchema } from 'graphql';
import { ApiError } from '../errors.ts';

/** The entity types of the schema (each has `@key(fields: "id")`, DESIGN §10). */
const ENTITY_TYPES = new Set(['Agent', 'Tool', 'Skill', 'Workspace', 'Project', 'Repo', 'User', 'McpServer']);

function checkRepresentation(rep: unknown, i: number): void {
  const field = `/representations/${i}`;
  if (rep === null || typeof rep !== 'object' || Array.isArray(rep))
    throw new ApiError('invalid_field', `${field} must be an object`, { field });
  const { __typename: typename, id } = rep as { __typename?: unknown; id?: unknown };
  if (typeof typename !== 'string' || !ENTITY_TYPES.has(typename)) {
    throw new ApiError(
      'invalid_field',
      `${field}/__typename must name an entity type: ${[...ENTITY_TYPES].join(', ')}`,
      { field: `${field}/__typename` },
    );
  }
  if (typeof id !== 'string')
    throw new ApiError('invalid_field', `${field}/id must be a string`, { field: `${field}/id` });
}

/** Wraps the schema's `Query._entities` resolver (in place, once) with the checks above. */
export function checkEntityRepresentations(schema: GraphQLSchema): void {
  const field = schema.getQueryType()?.getFields()._entities;
  const resolve = field?.resolve;
  if (field === undefined || resolve === undefined) return;
  field.resolve = ((source, args: { representations?: unknown }, context, info) => {
    const reps = args.representations;
    if (Array.isArray(reps)) reps.forEach(checkRepresentation);
    return resolve(source, args, context, info);
  }) as GraphQLFieldResolver<unknown, unknown>;
}
