/**
 * Operation 8: an agent's profile image. The stored image, or a deterministic generated PNG when
 * the agent has none. 404 when the agent is unknown or not discoverable, 403 when not readable.
 */
import type { RequestContext } from '../context.ts';
import type { ProfileImage } from '../domain/types.ts';
import { ApiError } from '../errors.ts';
import { generateProfilePng } from '../shared/png.ts';

export async function getProfileImage(ctx: RequestContext, agentId: string): Promise<ProfileImage> {
  const agent = await ctx.loaders.artifact.load(agentId);
  if (agent === null || agent.kind !== 'agent') throw new ApiError('not_found', `agent ${agentId} not found`);
  (await ctx.access()).assertReadable(agent.workspace_id, 'agent', agentId);
  const stored = await ctx.registry.getProfileImage(agentId);
  const image = stored ?? { content_type: 'image/png', bytes: generateProfilePng(agentId) };
  ctx.checkDeadline();
  return image;
}
