/**
 * OTLP ingestion (DESIGN §9, §12): mapped spans are checked against what their sender may claim
 * and stored; the answer counts what was rejected and why. A span goes to resource
 * `workspace.id`, else to the caller's default workspace (a service account's own; for a user,
 * their personal workspace, else the first they can write to), and the sender needs
 * `can_create_content` there. A span that names a skill counts for it only when the sender can
 * read that skill (by id, or by name among the sender's readable workspaces), or when the sender is
 * an agent's service account and its agent declares the skill with an active `uses_skill`
 * relationship (a skill of the same organization, wherever it lives: the span still lands in a
 * workspace the sender may write to). A span's agent is the registry agent `gen_ai.agent.id` names
 * when the sender can read it (a service account: also its own agent), else `gen_ai.agent.name` as
 * sent unless it is the id of an artifact of the organization (a free name never counts for a
 * registry agent), else, sent with an agent's service-account credentials (API key or JWT client), that agent
 * (the sender is the agent), else none; an unknown agent never refuses a span (frameworks name
 * their agents freely). A name as sent is kept only among the first OTLP_MAX_AGENT_NAMES distinct
 * names of its workspace and UTC day (store/agent-names.ts): past them the span is stored as it would
 * be without the name, and the answer's partial_success says so.
 */
import type { Access } from '../auth/access.ts';
import type { RequestContext } from '../context.ts';
import type { ArtifactVersion } from '../domain/types.ts';
import { QueryCancelledError, type InsertOutcome, type MetricPointRow } from '../store/trace-port.ts';
import type { MappedPoint } from './metrics/mapping.ts';
import type { MappedEvaluation } from './logs/evaluations.ts';
import type { EvaluationRow } from '../store/evaluation-row.ts';
import type { AgentNameUse } from '../store/agent-names.ts';
import { ApiError } from '../errors.ts';
import { keptColumns, type SpanBatch } from './span-batch.ts';

export interface IngestResult {
  /** Spans (points) stored by this request. */
  accepted: number;
  /** Spans (points) stored already, by an earlier delivery of the same request or another. */
  duplicates: number;
  rejected: number;
  errorMessage: string;
}

/**
 * Hands the request's rows to the store (RequestContext.write: withdrawn at the deadline while
 * they wait, answered after the commit once begun). A write that did not commit is answered with
 * an error an exporter retries: 504 request_timeout when the deadline withdrew it, 503
 * traces_unavailable when the store failed it (a commit whose acknowledgement was lost is retried
 * too; the retry's rows are recognized as stored, DESIGN §12).
 */
async function store(
  ctx: RequestContext,
  write: (signal: AbortSignal) => Promise<InsertOutcome>,
): Promise<InsertOutcome> {
  try {
    return await ctx.write(write);
  } catch (err) {
    throw storeError(err);
  }
}

/** What a request answers when the store failed it or its deadline withdrew it: nothing of it was stored. */
function storeError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof QueryCancelledError)
    return new ApiError(
      'request_timeout',
      'the request could not be stored before its deadline; nothing of it was stored',
    );
  return new ApiError(
    'traces_unavailable',
    'the telemetry could not be stored; nothing of it was stored, retry later',
    {
      retryAfter: 5,
    },
  );
}

/** A span's agent name as sent, and where it goes (its place among the kept spans' agents). */
interface NamedSpan extends AgentNameUse {
  at: number;
}

/**
 * The places of the spans whose agent name as sent is not kept: the store admits at most
 * OTLP_MAX_AGENT_NAMES distinct names a workspace and UTC day (store/agent-names.ts, DESIGN §12),
 * and a span whose name is refused is stored as it would be without one.
 */
async function unkeptNames(ctx: RequestContext, named: readonly NamedSpan[]): Promise<number[]> {
  if (named.length === 0) return [];
  const distinct = new Map<string, AgentNameUse>();
  const keyOf = (n: AgentNameUse) => JSON.stringify([n.workspaceId, n.day, n.name]);
  for (const n of named) distinct.set(keyOf(n), { workspaceId: n.workspaceId, day: n.day, name: n.name });
  const cap = ctx.services.config.bounds.agentNamesPerDay;
  const uses = [...distinct.values()];
  const verdicts = await ctx.traces
    .admitAgentNames({ orgId: ctx.caller.orgId, cap, uses }, ctx.signal)
    .catch((err: unknown) => Promise.reject(storeError(err)));
  const refused = new Set(uses.filter((_, i) => verdicts[i] !== true).map(keyOf));
  return named.filter((n) => refused.has(keyOf(n))).map((n) => n.at);
}

/** Skill names one request may ask to resolve (each is one registry lookup). */
const MAX_SKILL_NAMES = 100;
/** Distinct reasons listed in the answer; the others are counted together. */
const MAX_REASONS = 20;

function defaultWorkspace(ctx: Pick<RequestContext, 'caller'>, access: Access): string | null {
  if (ctx.caller.kind === 'service_account') return ctx.caller.workspaceId;
  const writable = access.readableWorkspaceIds.filter((id) => access.canCreateContent(id));
  // The caller's own personal workspace: a user_default one they are a member of themselves, not
  // another user's that an admin of the root can also write to.
  const own = writable.find((id) => access.workspace(id)?.kind === 'user_default' && access.isDirectMember(id));
  return own ?? writable[0] ?? null;
}

/**
 * 403 access_denied when the caller may write telemetry nowhere: checked before the body is read,
 * so a caller without the right costs the service no decoding.
 */
export async function assertCanIngest(ctx: Pick<RequestContext, 'caller' | 'access'>): Promise<void> {
  if (defaultWorkspace(ctx, await ctx.access()) === null)
    throw new ApiError('access_denied', 'the caller may not create content in any workspace');
}

const short = (s: string) => JSON.stringify(s.length > 64 ? `${s.slice(0, 64)}…` : s);

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

const distinctOf = (values: (string | null)[]) => [...new Set(values.filter((v): v is string => v !== null))];

/** The skills the spans name, resolved in the caller's scope: `id:…`/`name:…` -> skill id, or why not. */
async function resolveSkills(
  ctx: RequestContext,
  access: Access,
  spans: SpanBatch,
): Promise<Map<string, string | { reason: string }>> {
  const out = new Map<string, string | { reason: string }>();
  const unreadable = (what: string) => ({ reason: `skill ${what} does not exist or the sender cannot read it` });
  const ids = distinctOf(spans.skillId);
  const names = distinctOf(spans.skillName);
  if (ids.length === 0 && names.length === 0) return out;
  const declared = await declaredSkills(ctx, access);
  const found = new Map<string, ArtifactVersion>();
  for (const a of ids.length > 0 ? await ctx.registry.getArtifacts(ids) : []) found.set(a.id, a);
  for (const id of ids) {
    const skill = found.get(id);
    const ok = skill !== undefined && skill.kind === 'skill' && access.canRead(skill.workspace_id);
    out.set(`id:${id}`, ok || declared.has(id) ? id : unreadable(short(id)));
  }
  await Promise.all(
    names.map(async (name, i) => {
      if (i >= MAX_SKILL_NAMES)
        return out.set(`name:${name}`, { reason: `more than ${MAX_SKILL_NAMES} distinct skill names in one request` });
      const skill = await ctx.registry.findSkillByName(access.readableWorkspaceIds, name);
      const id = skill?.id ?? [...declared.values()].find((d) => d.name === name)?.id;
      return out.set(`name:${name}`, id ?? unreadable(`named ${short(name)}`));
    }),
  );
  return out;
}

/**
 * The agents the spans name: `ids`, those of `gen_ai.agent.id` that are registry agents the sender
 * can read (or its own agent); `taken`, the `gen_ai.agent.name` values that are the id of an
 * artifact of the organization, which a free name may not claim (it would count as that agent's).
 */
async function resolveAgents(
  ctx: RequestContext,
  access: Access,
  spans: SpanBatch,
): Promise<{ ids: Set<string>; taken: Set<string> }> {
  const own = ctx.caller.kind === 'service_account' ? ctx.caller.agentId : null;
  const named = new Set(distinctOf(spans.agentId));
  const names = new Set(distinctOf(spans.agentName));
  const lookups = [...new Set([...named, ...names])].filter((v) => v !== own);
  const found = lookups.length > 0 ? await ctx.registry.getArtifacts(lookups) : [];
  const ids = new Set([...named].filter((id) => id === own));
  const taken = new Set([...names].filter((name) => name === own));
  for (const a of found) {
    if (named.has(a.id) && a.kind === 'agent' && access.canRead(a.workspace_id)) ids.add(a.id);
    if (names.has(a.id) && access.canDiscover(a.workspace_id)) taken.add(a.id);
  }
  return { ids, taken };
}

/**
 * The skills a service account's agent declares it uses: targets of its active `uses_skill`
 * relationships that are skills of the caller's organization (latest version, by id). A user
 * declares nothing: users report what they can read.
 */
async function declaredSkills(ctx: RequestContext, access: Access): Promise<Map<string, ArtifactVersion>> {
  const declared = new Map<string, ArtifactVersion>();
  if (ctx.caller.kind !== 'service_account') return declared;
  const agentId = ctx.caller.agentId;
  const targets = (await ctx.registry.getRelationships([agentId]))
    .filter((r) => r.from.id === agentId && r.rel_type === 'uses_skill' && r.relationship_status === 'active')
    .map((r) => r.to.id);
  if (targets.length === 0) return declared;
  for (const skill of await ctx.registry.getArtifacts(targets))
    if (skill.kind === 'skill' && access.canDiscover(skill.workspace_id)) declared.set(skill.id, skill);
  return declared;
}

/** Counts of rejected spans (or data points) by reason, with at most MAX_REASONS reasons spelled out. */
class Rejections {
  private readonly reasons = new Map<string, number>();
  private readonly noun: string;
  count = 0;

  constructor(noun = 'span(s)') {
    this.noun = noun;
  }

  add(why: string): void {
    this.count++;
    if (this.reasons.has(why) || this.reasons.size < MAX_REASONS)
      this.reasons.set(why, (this.reasons.get(why) ?? 0) + 1);
  }

  message(): string {
    const listed = [...this.reasons].map(([why, n]) => `${n} ${this.noun}: ${why}`);
    const others = this.count - [...this.reasons.values()].reduce((a, b) => a + b, 0);
    return [...listed, ...(others > 0 ? [`${others} ${this.noun}: other reasons`] : [])].join('; ');
  }
}

async function ingestSpans(ctx: RequestContext, spans: SpanBatch): Promise<IngestResult> {
  const access = await ctx.access();
  const fallback = defaultWorkspace(ctx, access);
  if (fallback === null) throw new ApiError('access_denied', 'the caller may not create content in any workspace');
  const skills = await resolveSkills(ctx, access, spans);
  const agents = await resolveAgents(ctx, access, spans);
  // A span that names no agent, sent with an agent's own credentials, is that agent's.
  const own = ctx.caller.kind === 'service_account' ? ctx.caller.agentId : null;
  await yieldToEventLoop();
  ctx.checkDeadline();

  const kept: number[] = [];
  const workspaceIds: string[] = [];
  const skillIds: (string | null)[] = [];
  const agentIds: (string | null)[] = [];
  const named: NamedSpan[] = [];
  const rejected = new Rejections();
  for (let i = 0; i < spans.length; i++) {
    const invalid = spans.invalid[i];
    if (invalid !== null && invalid !== undefined) {
      rejected.add(invalid);
      continue;
    }
    const workspaceId = spans.workspace[i] ?? fallback;
    if (!access.canCreateContent(workspaceId)) {
      rejected.add(`no permission to write to workspace ${short(workspaceId)}`);
      continue;
    }
    const id = spans.skillId[i];
    const name = spans.skillName[i];
    const skill = id != null ? skills.get(`id:${id}`) : name != null ? skills.get(`name:${name}`) : null;
    if (skill !== null && typeof skill !== 'string') {
      rejected.add(skill?.reason ?? 'unresolved skill');
      continue;
    }
    kept.push(i);
    workspaceIds.push(workspaceId);
    skillIds.push(skill);
    const agentId = spans.agentId[i] ?? null;
    const agentName = spans.agentName[i] ?? null;
    const free = agentName !== null && !agents.taken.has(agentName) ? agentName : null;
    const registered = agentId !== null && agents.ids.has(agentId) ? agentId : null;
    if (registered === null && free !== null) {
      const day = Math.floor((spans.columns.start_s[i] as number) / 86400);
      named.push({ at: agentIds.length, workspaceId, day, name: free });
    }
    agentIds.push(registered ?? free ?? own);
  }
  const unnamed = await unkeptNames(ctx, named);
  for (const at of unnamed) agentIds[at] = own;
  // Checking the spans and handing them to the store are each a few milliseconds of synchronous
  // work per 10,000 spans: the event loop serves other requests in between.
  await yieldToEventLoop();
  const columns = keptColumns(spans, kept, {
    orgId: ctx.caller.orgId,
    workspaceIds,
    skills: skillIds,
    agents: agentIds,
  });
  const { stored, duplicates } = await store(ctx, (signal) => ctx.traces.insertColumns(columns, signal));
  const cap = ctx.services.config.bounds.agentNamesPerDay;
  const notes = [rejected.message()];
  if (unnamed.length > 0)
    notes.push(
      `${unnamed.length} span(s) stored without their gen_ai.agent.name: their workspace holds ${cap} distinct agent names that day (OTLP_MAX_AGENT_NAMES)`,
    );
  const errorMessage = notes.filter((m) => m !== '').join('; ');
  return { accepted: stored, duplicates, rejected: rejected.count, errorMessage };
}

/**
 * Stores harness metric points (otlp/metrics/mapping.ts) under the same rule as spans: resource
 * `workspace.id`, else the caller's default workspace, where the sender needs can_create_content.
 */
async function ingestMetricPoints(ctx: RequestContext, points: readonly MappedPoint[]): Promise<IngestResult> {
  const access = await ctx.access();
  const fallback = defaultWorkspace(ctx, access);
  if (fallback === null) throw new ApiError('access_denied', 'the caller may not create content in any workspace');
  const rows: MetricPointRow[] = [];
  const rejected = new Rejections('data point(s)');
  for (const p of points) {
    if (p.invalid !== null) {
      rejected.add(p.invalid);
      continue;
    }
    const workspaceId = p.workspace ?? fallback;
    if (!access.canCreateContent(workspaceId)) {
      rejected.add(`no permission to write to workspace ${short(workspaceId)}`);
      continue;
    }
    const { metric, key, session, time_s, value } = p;
    rows.push({ org_id: ctx.caller.orgId, key, workspace_id: workspaceId, session, metric, time_s, value });
  }
  const { stored, duplicates } = await store(ctx, (signal) => ctx.traces.insertMetricPoints(rows, signal));
  return { accepted: stored, duplicates, rejected: rejected.count, errorMessage: rejected.message() };
}

/**
 * Stores evaluation events (otlp/logs/evaluations.ts) under the same rule as spans: resource
 * `workspace.id`, else the caller's default workspace, where the sender needs can_create_content.
 * An evaluation counts with the spans of its own workspace (store/evaluation-row.ts).
 */
async function ingestEvaluations(ctx: RequestContext, evaluations: readonly MappedEvaluation[]): Promise<IngestResult> {
  const access = await ctx.access();
  const fallback = defaultWorkspace(ctx, access);
  if (fallback === null) throw new ApiError('access_denied', 'the caller may not create content in any workspace');
  const rows: EvaluationRow[] = [];
  const rejected = new Rejections('evaluation(s)');
  for (const e of evaluations) {
    if (e.invalid !== null) {
      rejected.add(e.invalid);
      continue;
    }
    const workspaceId = e.workspace ?? fallback;
    if (!access.canCreateContent(workspaceId)) {
      rejected.add(`no permission to write to workspace ${short(workspaceId)}`);
      continue;
    }
    rows.push({ org_id: ctx.caller.orgId, workspace_id: workspaceId, ...e.fields });
  }
  const { stored, duplicates } = await store(ctx, (signal) => ctx.traces.insertEvaluations(rows, signal));
  return { accepted: stored, duplicates, rejected: rejected.count, errorMessage: rejected.message() };
}

/**
 * The rows of one decoded request, each kind stored under its own rule (a logs request may carry
 * harness events, which are spans, and evaluations); the answers summed, their reasons joined.
 */
export async function ingestDecoded(
  ctx: RequestContext,
  decoded: { spans: SpanBatch; points: readonly MappedPoint[]; evaluations: readonly MappedEvaluation[] },
): Promise<IngestResult> {
  const results: IngestResult[] = [];
  if (decoded.points.length > 0) results.push(await ingestMetricPoints(ctx, decoded.points));
  if (decoded.spans.length > 0) results.push(await ingestSpans(ctx, decoded.spans));
  if (decoded.evaluations.length > 0) results.push(await ingestEvaluations(ctx, decoded.evaluations));
  const sum = (f: (r: IngestResult) => number) => results.reduce((n, r) => n + f(r), 0);
  return {
    accepted: sum((r) => r.accepted),
    duplicates: sum((r) => r.duplicates),
    rejected: sum((r) => r.rejected),
    errorMessage: results
      .map((r) => r.errorMessage)
      .filter((m) => m !== '')
      .join('; '),
  };
}
