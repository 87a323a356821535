/** ToolGroup: a tool group of REST operation 3, its metrics as fields. */
import type { ToolGroupResolvers } from '../../generated/graphql.ts';

/** Resolvers of `ToolGroup` (see the file comment). */
export const ToolGroup: ToolGroupResolvers = {
  key: (group) => group.key,
};
