/**
 * Pages whose items are already JSON text (ready-to-send artifacts, artifacts/present.ts):
 * joined as they are, not parsed and serialized again. Fastify sends a string with a JSON content
 * type unchanged, so the route's response schema documents the answer without re-serializing it.
 */
import type { FastifyReply } from 'fastify';

/**
 * Sends `{"items":[…],"page":{…}}`. Fastify runs no preSerialization hook for a string, so the
 * deadline check there (request-deadline.ts) does not see it: the handlers check the deadline after their
 * last step instead.
 */
export function sendJsonPage(reply: FastifyReply, result: { items: readonly string[]; page: object }): FastifyReply {
  return reply
    .type('application/json; charset=utf-8')
    .send(`{"items":[${result.items.join(',')}],"page":${JSON.stringify(result.page)}}`);
}
