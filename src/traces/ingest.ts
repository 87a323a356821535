/**
 * OTLP ingestion (DESIGN §9): decoded spans are mapped, checked against the caller's right to
 * create content in their workspace, and stored; the answer counts what was rejected and why.
 * A span goes to resource `workspace.id`, else to the caller's default workspace (a service
 * account's own; for a user, their personal workspace, else the first they can write to).
 */
import type { Access } from '../auth/access.ts';
import type { RequestContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import type { SpanRow, TraceStore } from '../store/trace-port.ts';
import type { DecodedSpan } from './otlp-decode.ts';
import { invalidRow, invalidSpan, skillRef, toSpanRow } from './span-mapping.ts';

export interface IngestResult {
  accepted: number;
  rejected: number;
  errorMessage: string;
}

function defaultWorkspace(ctx: RequestContext, access: Access): string | null {
  if (ctx.caller.kind === 'service_account') return ctx.caller.workspaceId;
  const writable = access.readableWorkspaceIds.filter((id) => access.canCreateContent(id));
  return writable.find((id) => access.workspace(id)?.kind === 'user_default') ?? writable[0] ?? null;
}

export async function ingestSpans(ctx: RequestContext, store: TraceStore, spans: DecodedSpan[]): Promise<IngestResult> {
  const access = await ctx.access();
  const fallback = defaultWorkspace(ctx, access);
  if (fallback === null) throw new ApiError('access_denied', 'the caller may not create content in any workspace');
  const skillIds = new Map<string, Promise<string>>();
  const resolve = (name: string) => {
    let found = skillIds.get(name);
    if (found === undefined) {
      // An unknown name is kept as given, so nothing sent is lost.
      found = ctx.registry.findSkillByName(access.readableWorkspaceIds, name).then((s) => s?.id ?? name);
      skillIds.set(name, found);
    }
    return found;
  };

  const rows: SpanRow[] = [];
  const reasons = new Map<string, number>();
  const reject = (why: string) => reasons.set(why, (reasons.get(why) ?? 0) + 1);
  for (const span of spans) {
    const invalid = invalidSpan(span);
    if (invalid !== null) { reject(invalid); continue; }
    const target = span.resource.get('workspace.id');
    const workspaceId = typeof target === 'string' && target !== '' ? target : fallback;
    if (!access.canCreateContent(workspaceId)) { reject(`no permission to write to workspace ${workspaceId.slice(0, 100)}`); continue; }
    const ref = skillRef(span);
    const skillId = ref === null ? null : 'id' in ref ? ref.id : await resolve(ref.name);
    const row = toSpanRow(span, { orgId: ctx.caller.orgId, workspaceId, skillId });
    const unstorable = invalidRow(row);
    if (unstorable !== null) { reject(unstorable); continue; }
    rows.push(row);
  }
  await store.insertSpans(rows);
  const rejected = spans.length - rows.length;
  const errorMessage = [...reasons].map(([why, n]) => `${n} span(s): ${why}`).join('; ');
  return { accepted: rows.length, rejected, errorMessage };
}
