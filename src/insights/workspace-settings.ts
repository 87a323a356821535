/**
 * A workspace's detection settings over the API: anyone who can read the workspace sees every
 * setting with its default, range, meaning and the value detection uses there; its admins replace
 * the workspace's overrides (checked whole: an unknown name or a value out of its range refuses
 * the write, each named). Overrides apply to that workspace only, not to its children
 * (docs/insights.md). Transport-free: REST and GraphQL call these.
 */
import type { RequestContext } from '../context.ts';
import { ApiError, fieldErrors } from '../errors.ts';
import { checkSettings, describeSettings, effectiveSettings, type SettingDescription } from './settings.ts';

type WorkspaceSetting = SettingDescription & { value: number; overridden: boolean };

export interface WorkspaceSettings {
  workspace_id: string;
  settings: WorkspaceSetting[];
}

async function present(ctx: RequestContext, workspaceId: string): Promise<WorkspaceSettings> {
  const overrides = (await ctx.insights.detectionSettings(ctx.caller.orgId))[workspaceId] ?? {};
  const { settings } = effectiveSettings(overrides);
  return {
    workspace_id: workspaceId,
    settings: describeSettings().map((d) => ({
      ...d,
      value: settings[d.name] ?? d.default,
      overridden: Object.hasOwn(overrides, d.name) && settings[d.name] === overrides[d.name],
    })),
  };
}

/** The settings detection uses in a workspace (404/403 as any workspace read). */
export async function getWorkspaceSettings(ctx: RequestContext, workspaceId: string): Promise<WorkspaceSettings> {
  (await ctx.access()).assertReadable(workspaceId);
  return present(ctx, workspaceId);
}

/** Replaces a workspace's overrides (its admins only; `{}` restores every default); answers the settings. */
export async function setWorkspaceSettings(
  ctx: RequestContext,
  workspaceId: string,
  overrides: Readonly<Record<string, unknown>>,
): Promise<WorkspaceSettings> {
  const access = await ctx.access();
  access.assertReadable(workspaceId);
  if (ctx.caller.kind !== 'user' || access.roleOf(workspaceId) !== 'admin')
    throw new ApiError('access_denied', `only an admin of workspace ${workspaceId} sets its insight detection`);
  const problems = checkSettings(overrides);
  if (problems.length > 0)
    throw fieldErrors(
      problems.map((p) => ({
        field: `/overrides/${p.name.replaceAll('~', '~0').replaceAll('/', '~1')}`,
        detail: `/overrides/${p.name} ${p.problem}`,
      })),
    );
  await ctx.write(() =>
    ctx.insights.setDetectionSettings(ctx.caller.orgId, workspaceId, overrides as Record<string, number>),
  );
  return present(ctx, workspaceId);
}
