/** Latest-artifact counts by kind: every kind present (0 when none), and their total. */
import type { ArtifactCountByKindResolvers } from '../../generated/graphql.ts';

/** The number of artifacts over every kind. */
export function total(counts: Record<string, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

/** Every kind, 0 when absent. */
export const ArtifactCountByKind: ArtifactCountByKindResolvers = {
  agent: (c) => c.agent ?? 0,
  tool: (c) => c.tool ?? 0,
  skill: (c) => c.skill ?? 0,
  prompt: (c) => c.prompt ?? 0,
  document: (c) => c.document ?? 0,
};
