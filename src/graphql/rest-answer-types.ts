/**
 * The REST answers that GraphQL types resolve over as they are (snake_case keys and all), so that
 * both transports show one answer. codegen.ts maps the schema's types to these ("parents"), so
 * every resolver is typed against what its parent really is.
 */
import type { SubscriptionItem } from '../insights/webhook-subscriptions.ts';
import type { InsightSchema } from '../skills/insight-schemas.ts';
import type { queryTraceStats } from '../skills/trace-stats.ts';
import type { maskIdentity } from '../shared/masked-identity.ts';

/** The masked identity, exactly as REST shows it (snake_case keys). */
export type IdentityParent = ReturnType<typeof maskIdentity>;

/** Latest-artifact counts keyed by kind; kinds without artifacts are absent. */
export type KindCountsParent = Record<string, number>;

/** Free-form objects of the REST resources shown through typed fields (enrichment profile, tool group key). */
export type RecordParent = Record<string, unknown>;

/** A trace statistics envelope exactly as REST operation 1 answers it. */
export type TraceStatsParent = Awaited<ReturnType<typeof queryTraceStats>>;

/** The `data` of an envelope: one of three shapes, told apart by `request_type`. */
export type TraceStatsDataParent = { request_type: string } & RecordParent;

/** An insight schema exactly as REST operation 4 lists it. */
export type InsightSchemaParent = InsightSchema;

/** A subscription just created, and its secret (REST answers them as one object). */
export type CreatedSubscriptionParent = { subscription: SubscriptionItem; secret: string };
