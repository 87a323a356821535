/** Root lookups: the caller, objects by id (404/403 as REST), and the insight schemas (op. 4). */
import type { QueryResolvers } from '../../generated/graphql.ts';
import { listInsightSchemas } from '../../skills/insight-schemas.ts';
import {
  orgUser,
  readableArtifact,
  readableMcpServer,
  readableProject,
  readableRepo,
  readableWorkspace,
} from '../authorize.ts';

/** Lookup fields of `Query`. */
export const queryLookups: QueryResolvers = {
  viewer: (_root, _args, ctx) => ctx.caller,
  agent: (_root, { id }, ctx) => readableArtifact(ctx, id, 'agent'),
  tool: (_root, { id }, ctx) => readableArtifact(ctx, id, 'tool'),
  skill: (_root, { id }, ctx) => readableArtifact(ctx, id, 'skill'),
  artifact: (_root, { id }, ctx) => readableArtifact(ctx, id),
  workspace: (_root, { id }, ctx) => readableWorkspace(ctx, id),
  project: (_root, { id }, ctx) => readableProject(ctx, id),
  repo: (_root, { id }, ctx) => readableRepo(ctx, id),
  user: (_root, { id }, ctx) => orgUser(ctx, id),
  mcpServer: (_root, { id }, ctx) => readableMcpServer(ctx, id),
  insightSchemas: () => [...listInsightSchemas().items],
};
