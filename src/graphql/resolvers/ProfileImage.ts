/** ProfileImage: the image bytes as base64 (REST operation 8 sends them as a JSON array of bytes). */
import type { ProfileImageResolvers } from '../../generated/graphql.ts';

/** Resolvers of `ProfileImage` (see the file comment). */
export const ProfileImage: ProfileImageResolvers = {
  contentType: (image) => image.content_type,
  base64: (image) => Buffer.from(image.bytes).toString('base64'),
};
