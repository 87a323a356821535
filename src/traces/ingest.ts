/**
 * OTLP ingestion (DESIGN §9, §12): mapped spans are checked against what their sender may claim
 * and stored; the answer counts what was rejected and why. A span goes to resource
 * `workspace.id`, else to the caller's default workspace (a service account's own; for a user,
 * their personal workspace, else the first they can write to), and the sender needs
 * `can_create_content` there. A span that names a skill counts for it only when the sender can
 * read that skill (by id, or by name among the sender's readable workspaces).
 */
import type { Access } from '../auth/access.ts';
import type { RequestContext } from '../context.ts';
import type { ArtifactVersion } from '../domain/types.ts';
import { ApiError } from '../errors.ts';
import type { SpanRow, TraceStore } from '../store/trace-port.ts';
import type { MappedSpan, SkillRef } from './span-mapping.ts';

export interface IngestResult {
  accepted: number;
  rejected: number;
  errorMessage: string;
}

/** Skill names one request may ask to resolve (each is one registry lookup). */
export const MAX_SKILL_NAMES = 100;
/** Distinct reasons listed in the answer; the others are counted together. */
const MAX_REASONS = 20;

function defaultWorkspace(ctx: RequestContext, access: Access): string | null {
  if (ctx.caller.kind === 'service_account') return ctx.caller.workspaceId;
  const writable = access.readableWorkspaceIds.filter((id) => access.canCreateContent(id));
  return writable.find((id) => access.workspace(id)?.kind === 'user_default') ?? writable[0] ?? null;
}

/**
 * 403 access_denied when the caller may write telemetry nowhere: checked before the body is read,
 * so a caller without the right costs the service no decoding.
 */
export async function assertCanIngest(ctx: RequestContext): Promise<void> {
  if (defaultWorkspace(ctx, await ctx.access()) === null) throw new ApiError('access_denied', 'the caller may not create content in any workspace');
}

const short = (s: string) => JSON.stringify(s.length > 64 ? `${s.slice(0, 64)}…` : s);

/** The skills the spans name, resolved in the caller's scope: ref key -> skill id, or why not. */
async function resolveSkills(ctx: RequestContext, access: Access, refs: SkillRef[]): Promise<Map<string, string | { reason: string }>> {
  const out = new Map<string, string | { reason: string }>();
  const unreadable = (what: string) => ({ reason: `skill ${what} does not exist or the sender cannot read it` });
  const ids = [...new Set(refs.flatMap((r) => ('id' in r ? [r.id] : [])))];
  const names = [...new Set(refs.flatMap((r) => ('name' in r ? [r.name] : [])))];
  const found = new Map<string, ArtifactVersion>();
  for (const a of ids.length > 0 ? await ctx.registry.getArtifacts(ids) : []) found.set(a.id, a);
  for (const id of ids) {
    const skill = found.get(id);
    const ok = skill !== undefined && skill.kind === 'skill' && access.canRead(skill.workspace_id);
    out.set(`id:${id}`, ok ? id : unreadable(short(id)));
  }
  await Promise.all(names.map(async (name, i) => {
    if (i >= MAX_SKILL_NAMES) return out.set(`name:${name}`, { reason: `more than ${MAX_SKILL_NAMES} distinct skill names in one request` });
    const skill = await ctx.registry.findSkillByName(access.readableWorkspaceIds, name);
    return out.set(`name:${name}`, skill !== null ? skill.id : unreadable(`named ${short(name)}`));
  }));
  return out;
}

/** Counts of rejected spans by reason, with at most MAX_REASONS reasons spelled out. */
class Rejections {
  private readonly reasons = new Map<string, number>();
  count = 0;

  add(why: string): void {
    this.count++;
    if (this.reasons.has(why) || this.reasons.size < MAX_REASONS) this.reasons.set(why, (this.reasons.get(why) ?? 0) + 1);
  }

  message(): string {
    const listed = [...this.reasons].map(([why, n]) => `${n} span(s): ${why}`);
    const others = this.count - [...this.reasons.values()].reduce((a, b) => a + b, 0);
    return [...listed, ...(others > 0 ? [`${others} span(s): other reasons`] : [])].join('; ');
  }
}

export async function ingestSpans(ctx: RequestContext, store: TraceStore, spans: MappedSpan[]): Promise<IngestResult> {
  const access = await ctx.access();
  const fallback = defaultWorkspace(ctx, access);
  if (fallback === null) throw new ApiError('access_denied', 'the caller may not create content in any workspace');
  const refs = spans.flatMap((s) => (s.invalid === null && s.skill !== null ? [s.skill] : []));
  const skills = refs.length > 0 ? await resolveSkills(ctx, access, refs) : new Map<string, string | { reason: string }>();
  ctx.checkDeadline();

  const rows: SpanRow[] = [];
  const rejected = new Rejections();
  for (const span of spans) {
    if (span.invalid !== null) { rejected.add(span.invalid); continue; }
    const workspaceId = span.workspace ?? fallback;
    if (!access.canCreateContent(workspaceId)) { rejected.add(`no permission to write to workspace ${short(workspaceId)}`); continue; }
    const skill = span.skill === null ? null : skills.get('id' in span.skill ? `id:${span.skill.id}` : `name:${span.skill.name}`);
    if (skill !== null && typeof skill !== 'string') { rejected.add(skill?.reason ?? 'unresolved skill'); continue; }
    rows.push({ ...span.fields, org_id: ctx.caller.orgId, workspace_id: workspaceId, skill });
  }
  await store.insertSpans(rows);
  return { accepted: rows.length, rejected: rejected.count, errorMessage: rejected.message() };
}
