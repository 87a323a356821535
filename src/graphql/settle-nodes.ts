/**
 * A list of artifacts loads, before it answers, the edges its query asks of every node (creators,
 * relationships and the edges read from them), each in the one batch its field resolvers would have
 * made. graphql-js then resolves the nodes' fields synchronously: no promise per field and node,
 * which was most of what a nested list cost above its statements and the executor itself.
 * Only loading moves here: every field still authorizes what it shows, and a load that fails
 * fails its fields as before (the loaders keep the rejection).
 */
import type { FieldNode, GraphQLObjectType, GraphQLResolveInfo } from 'graphql';
import { getNamedType, isObjectType } from 'graphql';
import { collectSubfields } from 'graphql/execution/collectFields.js';
import type { RequestContext } from '../context.ts';
import type { ArtifactVersion } from '../domain/types.ts';
import { loadOrgUsers } from './authorize.ts';
import { sliceConnection, type Connection } from './connection.ts';
import { relationshipsOf } from './relationships.ts';
import { TYPE_OF_KIND } from './resolvers/Artifact.ts';

/** Fields computed from an artifact's relationships (relationships.ts). */
const FROM_RELATIONSHIPS = new Set(['relationships', 'usedTools', 'usedSkills', 'usedBy']);

/** The field nodes of `name` among the subfields `fieldNodes` select on `type` (aliases, fragments, @skip/@include applied). */
function subfields(
  info: GraphQLResolveInfo,
  type: GraphQLObjectType,
  fieldNodes: readonly FieldNode[],
  name: string,
): FieldNode[] {
  const found: FieldNode[] = [];
  for (const nodes of collectSubfields(info.schema, info.fragments, info.variableValues, type, fieldNodes).values()) {
    for (const node of nodes) if (node.name.value === name) found.push(node);
  }
  return found;
}

/** The object type of field `name` of `type`, if it is one. */
function fieldType(type: GraphQLObjectType, name: string): GraphQLObjectType | undefined {
  const named = getNamedType(type.getFields()[name]?.type);
  return isObjectType(named) ? named : undefined;
}

/** The names of the fields the current connection field selects on its nodes of type `nodeType`. */
function nodeFieldNames(info: GraphQLResolveInfo, nodeType: GraphQLObjectType): Set<string> {
  const connection = getNamedType(info.returnType);
  const names = new Set<string>();
  if (!isObjectType(connection)) return names;
  const nodeFields = subfields(info, connection, info.fieldNodes, 'nodes');
  const edgeType = fieldType(connection, 'edges');
  if (edgeType !== undefined)
    nodeFields.push(...subfields(info, edgeType, subfields(info, connection, info.fieldNodes, 'edges'), 'node'));
  if (nodeFields.length === 0) return names;
  for (const nodes of collectSubfields(info.schema, info.fragments, info.variableValues, nodeType, nodeFields).values())
    for (const node of nodes) names.add(node.name.value);
  return names;
}

/**
 * Loads what the connection field being resolved (`info`) asks of the artifacts `rows` it is about
 * to answer. Never throws: a failed load is the failure of the fields that read it.
 */
export async function settleArtifactNodes(
  ctx: RequestContext,
  info: GraphQLResolveInfo,
  rows: readonly ArtifactVersion[],
): Promise<void> {
  const asked = new Set<string>();
  for (const kind of new Set(rows.map((row) => row.kind))) {
    const type = info.schema.getType(TYPE_OF_KIND[kind]);
    if (isObjectType(type)) for (const name of nodeFieldNames(info, type)) asked.add(name);
  }
  const loads: Promise<unknown>[] = [];
  if (asked.has('creator')) loads.push(loadOrgUsers(ctx, [...new Set(rows.map((row) => row.created_by))]));
  if ([...FROM_RELATIONSHIPS].some((name) => asked.has(name)))
    for (const row of rows) loads.push(Promise.resolve(relationshipsOf(ctx, row)));
  await Promise.allSettled(loads);
}

/** `sliceConnection` of artifacts already in memory, whose page then loads what the query asks of it. */
export async function settledSlice(
  ctx: RequestContext,
  info: GraphQLResolveInfo,
  list: string,
  all: ArtifactVersion[],
  first: number | null | undefined,
  after: string | null | undefined,
): Promise<Connection<ArtifactVersion>> {
  const connection = sliceConnection(list, all, first, after);
  await settleArtifactNodes(ctx, info, connection.nodes);
  return connection;
}
