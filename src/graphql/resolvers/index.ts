/** The resolver map of the subgraph: one entry per type whose fields are not plain renames. */
import type { Resolvers } from '../../generated/graphql.ts';
import { Agent } from './Agent.ts';
import { Artifact, Document, Prompt } from './Artifact.ts';
import { ArtifactCountByKind } from './counts.ts';
import { McpServer } from './McpServer.ts';
import { Insight, InsightSubject, mutations } from './Insight.ts';
import { settingsMutations } from './insight-settings.ts';
import { Member } from './Member.ts';
import { ProfileImage } from './ProfileImage.ts';
import { Project } from './Project.ts';
import { queryLists } from './query-lists.ts';
import { queryLookups } from './query-lookups.ts';
import { Relationship } from './Relationship.ts';
import { Repo } from './Repo.ts';
import { Skill } from './Skill.ts';
import { Tool } from './Tool.ts';
import { ToolGroup } from './ToolGroup.ts';
import { TraceStatsData } from './trace-stats.ts';
import { User } from './User.ts';
import { Viewer } from './Viewer.ts';
import { Workspace } from './Workspace.ts';

/** Every resolver of the subgraph, typed by the generated `Resolvers`. */
export const resolvers: Resolvers = {
  Query: { ...queryLookups, ...queryLists },
  Mutation: { ...mutations, ...settingsMutations },
  Insight,
  InsightSubject,
  Artifact,
  Agent,
  Tool,
  McpServer,
  Skill,
  Prompt,
  Document,
  Relationship,
  Workspace,
  Project,
  Repo,
  User,
  Member,
  Viewer,
  ArtifactCountByKind,
  ProfileImage,
  ToolGroup,
  TraceStatsData,
};
