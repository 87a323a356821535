/**
 * Webhook subscriptions of a workspace: created, listed and deleted by its admins only (a role
 * inherited from an ancestor counts; editors, viewers and service accounts are refused). A
 * subscription names an http(s) URL, the insight kinds and the subjects it wants (none: all), and
 * gets a signing secret shown once, in the answer of its creation: the store keeps only the salt
 * the secret is derived from. Transport-free: REST and GraphQL both call these functions, and
 * GraphQL checks its input with {@link subscriptionBodySchema}, so both refuse the same requests.
 */
import { randomBytes } from 'node:crypto';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Access } from '../auth/access.ts';
import type { RequestContext } from '../context.ts';
import { ApiError, fieldErrors, ruleBroken, type FieldError } from '../errors.ts';
import {
  INSIGHT_KINDS,
  type InsightKind,
  type InsightSubject,
  type WebhookSubscription,
} from '../store/insight-port.ts';

/** Subscriptions a workspace holds at most: each one is a delivery per matching insight. */
export const MAX_SUBSCRIPTIONS_PER_WORKSPACE = 20;
/** Subjects one subscription names at most. */
export const MAX_SUBSCRIPTION_SUBJECTS = 50;
/** The longest URL a subscription takes. */
const MAX_WEBHOOK_URL_LENGTH = 2048;

const SUBJECT_TYPES = ['skill', 'agent', 'tool'] as const;

/** The body of a creation (REST), and the rules GraphQL's input is checked by. */
export const subscriptionBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_WEBHOOK_URL_LENGTH,
      pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
      description:
        'Where deliveries are POSTed: an http(s) URL without credentials, whose host is not a private or loopback address unless configuration allows it',
    },
    kinds: {
      type: 'array',
      maxItems: INSIGHT_KINDS.length,
      uniqueItems: true,
      items: { type: 'string', enum: INSIGHT_KINDS },
      description: 'Only insights of these kinds; absent or empty: every kind',
    },
    subjects: {
      type: 'array',
      maxItems: MAX_SUBSCRIPTION_SUBJECTS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['type', 'id'],
        properties: {
          type: { type: 'string', enum: SUBJECT_TYPES },
          id: { type: 'string', minLength: 1, maxLength: 256, description: 'A skill or agent id, or a tool name' },
          server: {
            type: ['string', 'null'],
            minLength: 1,
            maxLength: 256,
            description: "A tool's MCP server (tools only)",
          },
        },
      },
      description:
        'Only insights about these subjects (skills and agents the creator can read, tools by name); absent or empty: every subject',
    },
  },
} as const satisfies JSONSchema;

export type SubscriptionBody = FromSchema<typeof subscriptionBodySchema>;

/**
 * What creating a subscription needs besides the store: the secret derived from the service's key
 * and a salt, and the rule deliveries keep about where they may go.
 */
export interface WebhookGuard {
  /** The signing secret (Standard Webhooks `whsec_…`) of a subscription with this salt. */
  secretOf(salt: string): string;
  /**
   * Why deliveries may not go to this URL (a private or loopback address not allowed, or its host
   * not looked up now), or null; never what its host resolved to. Its lookup is `orgId`'s.
   */
  refusal(url: URL, orgId: string): Promise<string | null>;
}

/** A subscription as both transports show it (never its secret). */
export type SubscriptionItem = {
  id: string;
  workspace_id: string;
  url: string;
  kinds: InsightKind[];
  subjects: InsightSubject[];
  created_by: string;
  created_at: string;
};

export type CreatedSubscription = SubscriptionItem & { secret: string };

function presentSubscription(s: WebhookSubscription): SubscriptionItem {
  return {
    id: s.id,
    workspace_id: s.workspace_id,
    url: s.url,
    kinds: [...s.kinds],
    subjects: [...s.subjects],
    created_by: s.created_by,
    created_at: s.created_at,
  };
}

/** The calling admin of the workspace and its Access: 404/403 as any workspace read, then 403 for a non-admin. */
async function adminOf(ctx: RequestContext, workspaceId: string): Promise<{ access: Access; userId: string }> {
  const access = await ctx.access();
  access.assertReadable(workspaceId);
  if (ctx.caller.kind !== 'user' || access.roleOf(workspaceId) !== 'admin')
    throw new ApiError('access_denied', `only an admin of workspace ${workspaceId} manages its webhook subscriptions`);
  return { access, userId: ctx.caller.userId };
}

/** The URL as deliveries will use it, or the field error that refuses it. */
function parseUrl(raw: string): URL | FieldError {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { field: '/url', detail: '/url is not a URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { field: '/url', detail: '/url must be an http or https URL' };
  if (url.username !== '' || url.password !== '')
    return { field: '/url', detail: '/url must not carry credentials (the deliveries are signed)' };
  return url;
}

/** The subjects as stored (duplicates dropped), and the field errors of those the creator may not name. */
async function checkSubjects(
  ctx: RequestContext,
  access: Access,
  subjects: NonNullable<SubscriptionBody['subjects']>,
): Promise<{ subjects: InsightSubject[]; errors: FieldError[] }> {
  const errors: FieldError[] = [];
  const artifacts = await ctx.loaders.artifact.loadMany(subjects.filter((s) => s.type !== 'tool').map((s) => s.id));
  const readable = new Set(
    artifacts.flatMap((a) =>
      a !== null && !(a instanceof Error) && access.canRead(a.workspace_id) ? [`${a.kind}:${a.id}`] : [],
    ),
  );
  const out = new Map<string, InsightSubject>();
  for (const [i, s] of subjects.entries()) {
    if (s.type === 'tool') {
      const server = s.server ?? null;
      out.set(JSON.stringify(['tool', s.id, server]), { type: 'tool', id: s.id, server });
      continue;
    }
    if (s.server !== undefined)
      errors.push({ field: `/subjects/${i}/server`, detail: `/subjects/${i}/server only a tool names a server` });
    else if (!readable.has(`${s.type}:${s.id}`))
      errors.push({ field: `/subjects/${i}/id`, detail: `/subjects/${i}/id is not a ${s.type} the caller can read` });
    else out.set(JSON.stringify([s.type, s.id]), { type: s.type, id: s.id });
  }
  return { subjects: [...out.values()], errors };
}

/**
 * Creates a subscription of `workspaceId` for the calling admin; answers it with its secret, which
 * is shown this once. Refused: a URL deliveries may not go to, a subject the creator cannot read
 * (422), and a workspace that holds MAX_SUBSCRIPTIONS_PER_WORKSPACE already (422). The transports
 * spend the caller's `webhooks.create` quota first: each creation may resolve a host name.
 */
export async function createSubscription(
  ctx: RequestContext,
  workspaceId: string,
  body: SubscriptionBody,
): Promise<CreatedSubscription> {
  const { access, userId } = await adminOf(ctx, workspaceId);
  const guard = ctx.services.webhooks;
  if (guard === undefined)
    throw new ApiError('service_unavailable', 'this service is not configured to deliver webhooks');
  const url = parseUrl(body.url);
  const { subjects, errors } = await checkSubjects(ctx, access, body.subjects ?? []);
  if (url instanceof URL) {
    const refused = await guard.refusal(url, ctx.caller.orgId);
    if (refused !== null) errors.unshift({ field: '/url', detail: `/url ${refused}` });
  } else errors.unshift(url);
  if (errors.length > 0) throw fieldErrors(errors);
  const salt = randomBytes(16).toString('base64url');
  const subscription: WebhookSubscription = {
    id: `whs_${randomBytes(12).toString('base64url')}`,
    org_id: ctx.caller.orgId,
    workspace_id: workspaceId,
    url: (url as URL).href,
    kinds: [...new Set(body.kinds ?? [])],
    subjects,
    created_by: userId,
    created_at: new Date().toISOString(),
    secret_salt: salt,
  };
  // The store counts and inserts in one serialized step: creations at once never pass the cap.
  const full = await ctx.write(() => ctx.insights.createSubscription(subscription, MAX_SUBSCRIPTIONS_PER_WORKSPACE));
  if (full !== null)
    throw ruleBroken(
      '/',
      `workspace ${workspaceId} holds ${full.held} webhook subscriptions, the most it may hold; delete one first`,
    );
  return { ...presentSubscription(subscription), secret: guard.secretOf(salt) };
}

/** The subscriptions of a workspace, oldest first (admins only; never their secrets). */
export async function listSubscriptions(ctx: RequestContext, workspaceId: string): Promise<SubscriptionItem[]> {
  await adminOf(ctx, workspaceId);
  const rows = await ctx.insights.listSubscriptions(ctx.caller.orgId, [workspaceId]);
  return rows.filter((s) => s.workspace_id === workspaceId).map(presentSubscription);
}

/** Deletes a subscription of a workspace (admins only) and the deliveries it still owes; 404 when it has none by that id. */
export async function deleteSubscription(ctx: RequestContext, workspaceId: string, id: string): Promise<void> {
  await adminOf(ctx, workspaceId);
  const [found] = await ctx.insights.getSubscriptions(ctx.caller.orgId, [id]);
  if (found?.workspace_id !== workspaceId)
    throw new ApiError('not_found', `webhook subscription ${id} not found in workspace ${workspaceId}`);
  await ctx.write(() => ctx.insights.deleteSubscription(ctx.caller.orgId, id));
}
