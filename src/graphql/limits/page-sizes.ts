/**
 * The page sizes the paged list fields really serve: the default a field's handler uses when
 * `first` is absent or null, and the largest page it clamps `first` to. The cost analysis prices a
 * connection by these, so they must be the handlers' own numbers (test/graphql/page-sizes.test.ts
 * checks every entry against what the field returns).
 */
import { SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT } from '../../agents/search-agents.ts';
import { SERVERS_DEFAULT_LIMIT, SERVERS_MAX_LIMIT } from '../../mcp-servers/find-servers.ts';
import { INSIGHTS_DEFAULT_LIMIT, INSIGHTS_MAX_LIMIT } from '../../insights/list-insights.ts';
import { MAX_SUBSCRIPTION_SUBJECTS, MAX_SUBSCRIPTIONS_PER_WORKSPACE } from '../../insights/webhook-subscriptions.ts';
import { SETTING_COUNT } from '../../insights/settings.ts';

/** The page a paged field serves without `first`, and the largest it serves at all. */
export interface PageSize {
  readonly default: number;
  readonly max: number;
}

/** windowOf's defaults (connection.ts): tools, toolAggregate, the artifacts of a container, a server's tools. */
const CONNECTION: PageSize = { default: 50, max: 200 };

/** The insight lists (insights/list-insights.ts): 20 a page, at most 100, as REST's. */
const INSIGHTS: PageSize = { default: INSIGHTS_DEFAULT_LIMIT, max: INSIGHTS_MAX_LIMIT };

/** Every field with a `first` argument, by `Type.field`. */
export const PAGE_SIZES: Readonly<Record<string, PageSize>> = {
  'Query.agentSearch': { default: SEARCH_DEFAULT_LIMIT, max: SEARCH_MAX_LIMIT },
  'Query.tools': CONNECTION,
  'Query.toolAggregate': CONNECTION,
  // findUsers (org/list-users.ts) pages with 50 / 200, as REST operation 7.
  'Query.users': { default: 50, max: 200 },
  'Workspace.artifacts': CONNECTION,
  'Project.artifacts': CONNECTION,
  'Repo.artifacts': CONNECTION,
  'User.artifacts': CONNECTION,
  'Query.mcpServers': { default: SERVERS_DEFAULT_LIMIT, max: SERVERS_MAX_LIMIT },
  'McpServer.tools': CONNECTION,
  'Skill.insights': INSIGHTS,
  'Agent.insights': INSIGHTS,
  'Workspace.insights': INSIGHTS,
};

/**
 * A paged field missing from PAGE_SIZES is priced at the largest page any field serves, with or
 * without `first`: a new field is over-priced until it is listed, never under-priced.
 */
const UNLISTED_PAGE: PageSize = { default: 200, max: 200 };

/** The page size of `Type.field` for a `first` as coerced (undefined or null when not given). */
export function pageSizeFor(coordinate: string, first: unknown): number {
  const sizes = PAGE_SIZES[coordinate] ?? UNLISTED_PAGE;
  return typeof first === 'number' && first >= 0 ? Math.min(first, sizes.max) : sizes.default;
}

/**
 * Unpaged lists whose length has a bound the service enforces where they are written: priced at
 * that bound (and declared so with `@listSize(assumedSize:)`), not at the default list size.
 */
export const BOUNDED_LISTS: Readonly<Record<string, number>> = {
  'Workspace.webhookSubscriptions': MAX_SUBSCRIPTIONS_PER_WORKSPACE,
  'WebhookSubscription.subjects': MAX_SUBSCRIPTION_SUBJECTS,
  // Every setting, always: the settings answers list each one, and a write takes one override of each at most.
  'Workspace.insightSettings': SETTING_COUNT,
  'InsightSettings.settings': SETTING_COUNT,
};
