/** Skill: the shared artifact fields, the agents that use it and its trace statistics (op. 1). */
import type { SkillResolvers } from '../../generated/graphql.ts';
import { queryTraceStats } from '../../skills/trace-stats.ts';
import { readableArtifact } from '../authorize.ts';
import { relatedArtifacts } from '../relationships.ts';
import { spendStatsWork } from '../limits/trace-budget.ts';
import { toTraceStatsRequest } from '../trace-stats-input.ts';
import { artifactFields } from './Artifact.ts';
import { subjectList } from '../../insights/list-insights.ts';
import { insightConnection, insightInput } from '../insight-loader.ts';

/** Resolvers of `Skill` (see the file comment). */
export const Skill: SkillResolvers = {
  __resolveReference: (ref, ctx) => readableArtifact(ctx, ref.id, 'skill'),
  ...artifactFields,
  usedBy: (row, _args, ctx) => relatedArtifacts(ctx, row, 'uses_skill', 'incoming', 'agent'),
  // Every traceStats of one operation spends from its trace-work budget (limits/trace-budget.ts).
  traceStats: (row, args, ctx) =>
    queryTraceStats(ctx, row.id, args.versionOrdinal ?? undefined, toTraceStatsRequest(args.input), (req) => {
      spendStatsWork(ctx, req);
    }),
  insights: async (row, args, ctx) => {
    const input = insightInput(args);
    return insightConnection(ctx, await subjectList(ctx, { type: 'skill', id: row.id }, input), input, args.after);
  },
};
