/**
 * Insights and webhook subscriptions on the graph: the subject of an insight resolves to the skill
 * or agent it names when the caller can read it (through the request's loaders), and the mutations
 * call the handlers of REST's subscription routes, with their input checked by the REST body's
 * JSON Schema so both transports refuse the same requests the same way.
 */
import type { ArtifactVersion } from '../../domain/types.ts';
import { rateLimitedError } from '../../rate-limits.ts';
import type {
  CreateWebhookSubscriptionInput,
  InsightResolvers,
  InsightSubjectResolvers,
  MutationResolvers,
} from '../../generated/graphql.ts';
import {
  createSubscription,
  deleteSubscription,
  subscriptionBodySchema,
  type SubscriptionBody,
} from '../../insights/webhook-subscriptions.ts';
import { restBodyCheck } from '../rest-body-check.ts';
import type { RequestContext } from '../../context.ts';
import { loadedAccess, readableWorkspaceOrNull } from '../authorize.ts';

/** The skill or agent `id` names, when it is one of that kind the caller can read; else null. */
async function readableSubject(
  ctx: RequestContext,
  id: string,
  kind: 'skill' | 'agent',
): Promise<ArtifactVersion | null> {
  const [row, access] = await Promise.all([ctx.loaders.artifact.load(id), loadedAccess(ctx)]);
  return row !== null && row.kind === kind && access.canRead(row.workspace_id) ? row : null;
}

export const InsightSubject: InsightSubjectResolvers = {
  server: (s) => (s.type === 'tool' ? s.server : null),
  skill: (s, _args, ctx) => (s.type === 'skill' ? readableSubject(ctx, s.id, 'skill') : null),
  agent: (s, _args, ctx) => (s.type === 'agent' ? readableSubject(ctx, s.id, 'agent') : null),
};

export const Insight: InsightResolvers = {
  workspace: (i, _args, ctx) => readableWorkspaceOrNull(ctx, i.workspace_id),
};

const checkBody = restBodyCheck(subscriptionBodySchema);

/** The REST body of the input; throws REST's field errors when it breaks the body's schema. */
function subscriptionBody(input: CreateWebhookSubscriptionInput): SubscriptionBody {
  const body = {
    url: input.url,
    ...(input.kinds != null ? { kinds: input.kinds } : {}),
    ...(input.subjects != null
      ? {
          subjects: input.subjects.map((s) => ({
            type: s.type,
            id: s.id,
            ...(s.server != null ? { server: s.server } : {}),
          })),
        }
      : {}),
  };
  checkBody(body);
  return body;
}

export const mutations: MutationResolvers = {
  createWebhookSubscription: async (_root, { input }, ctx) => {
    // The REST route's quota (insight-routes.ts), spent the same way: one per creation, refused ones too.
    const quota = await ctx.spendQuota('webhooks.create');
    if (quota.exceeded) throw rateLimitedError(quota);
    const { secret, ...subscription } = await createSubscription(ctx, input.workspaceId, subscriptionBody(input));
    return { subscription, secret };
  },
  deleteWebhookSubscription: async (_root, args, ctx) => {
    await deleteSubscription(ctx, args.workspaceId, args.id);
    return true;
  },
};
