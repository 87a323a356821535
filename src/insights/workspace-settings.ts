/**
 * A workspace's detection settings over the API: anyone who can read the workspace sees every
 * setting with its default, range, meaning and the value detection uses there; its admins replace
 * the workspace's overrides (checked whole: an unknown name or a value out of its range refuses
 * the write, each named). Overrides apply to that workspace only, not to its children
 * (docs/insights.md). Transport-free: REST and GraphQL call these, and GraphQL checks its input,
 * once made the REST body, with {@link settingsBodySchema}, so both refuse the same requests.
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { RequestContext } from '../context.ts';
import { ApiError, fieldErrors } from '../errors.ts';
import {
  checkSettings,
  describeSettings,
  effectiveSettings,
  SETTING_COUNT,
  type SettingDescription,
} from './settings.ts';

/** The longest setting name a write takes (the longest known one is far shorter). */
const MAX_SETTING_NAME_LENGTH = 64;

/** The body of a write (REST `PUT …/insight-settings`), and the rules GraphQL's input is checked by. */
export const settingsBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['overrides'],
  properties: {
    overrides: {
      type: 'object',
      maxProperties: SETTING_COUNT,
      propertyNames: { maxLength: MAX_SETTING_NAME_LENGTH },
      additionalProperties: { type: 'number' },
      description: 'The values that replace the defaults in this workspace, by setting name; {} restores every default',
    },
  },
} as const satisfies JSONSchema;

export type SettingsBody = FromSchema<typeof settingsBodySchema>;

export type WorkspaceSetting = SettingDescription & { value: number; overridden: boolean };

export interface WorkspaceSettings {
  workspace_id: string;
  settings: WorkspaceSetting[];
}

type OrgOverrides = Record<string, Record<string, number>>;

/**
 * The organization's overrides as a request's reads first got them: a GraphQL query asking the
 * settings of several workspaces reads them once. A write reads them again.
 */
const readByRequest = new WeakMap<RequestContext, Promise<OrgOverrides>>();

function orgOverrides(ctx: RequestContext): Promise<OrgOverrides> {
  let read = readByRequest.get(ctx);
  if (read === undefined) {
    read = ctx.insights.detectionSettings(ctx.caller.orgId);
    readByRequest.set(ctx, read);
    // A failed read is not kept: the next field of the request tries again.
    const kept = read;
    kept.catch(() => {
      if (readByRequest.get(ctx) === kept) readByRequest.delete(ctx);
    });
  }
  return read;
}

function present(workspaceId: string, all: OrgOverrides): WorkspaceSettings {
  const overrides = all[workspaceId] ?? {};
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
  return present(workspaceId, await orgOverrides(ctx));
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
  readByRequest.delete(ctx);
  return present(workspaceId, await orgOverrides(ctx));
}
