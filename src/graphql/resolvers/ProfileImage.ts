/** Small value types whose fields are not plain renames of the REST fields. */
import type { ProfileImageResolvers, ToolGroupResolvers } from '../../generated/graphql.ts';

/** The image bytes as base64 (REST operation 8 sends them as a JSON array of bytes). */
export const ProfileImage: ProfileImageResolvers = {
  contentType: (image) => image.content_type,
  base64: (image) => Buffer.from(image.bytes).toString('base64'),
};

/** A tool group of REST operation 3, its metrics as fields. */
export const ToolGroup: ToolGroupResolvers = {
  key: (group) => group.key,
};
