/**
 * Agent: the shared artifact fields, its profile image (operation 8), its tool/skill edges, its A2A
 * card and the trace statistics of its traces (operation 1's request and answer).
 */
import { agentCard } from '../../agents/agent-card.ts';
import { getProfileImage } from '../../agents/profile-image.ts';
import { queryAgentTraceStats } from '../../agents/trace-stats.ts';
import type { AgentResolvers } from '../../generated/graphql.ts';
import { readableArtifact } from '../authorize.ts';
import { spendListItems } from '../limits/list-budget.ts';
import { spendStatsWork } from '../limits/trace-budget.ts';
import { relatedArtifacts } from '../relationships.ts';
import { toTraceStatsRequest } from '../trace-stats-input.ts';
import { artifactFields } from './Artifact.ts';
import { subjectList } from '../../insights/list-insights.ts';
import { insightConnection, insightInput } from '../insight-loader.ts';

/** Resolvers of `Agent` (see the file comment). */
export const Agent: AgentResolvers = {
  __resolveReference: (ref, ctx) => readableArtifact(ctx, ref.id, 'agent'),
  ...artifactFields,
  profileImage: (row, _args, ctx) => getProfileImage(ctx, row.id),
  usedTools: (row, _args, ctx) => relatedArtifacts(ctx, row, 'uses_tool', 'outgoing', 'tool'),
  usedSkills: (row, _args, ctx) => relatedArtifacts(ctx, row, 'uses_skill', 'outgoing', 'skill'),
  // The card's skills are a list inside a scalar: they spend the request's list budget like usedSkills.
  card: async (row, _args, ctx) => {
    const card = await agentCard(ctx, row);
    spendListItems(ctx, card.skills);
    return card;
  },
  // Spends from the operation's trace-work budget like Skill.traceStats (limits/trace-budget.ts).
  traceStats: (row, args, ctx) =>
    queryAgentTraceStats(ctx, row.id, toTraceStatsRequest(args.input), (req) => {
      spendStatsWork(ctx, req);
    }),
  insights: async (row, args, ctx) => {
    const input = insightInput(args);
    return insightConnection(ctx, await subjectList(ctx, { type: 'agent', id: row.id }, input), input, args.after);
  },
};
