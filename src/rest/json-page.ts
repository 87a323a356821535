/**
 * Answers already JSON text (ready-to-send artifacts, artifacts/present.ts; MCP server versions,
 * mcp-servers/present.ts): joined as they are, not parsed and serialized again. Fastify sends a
 * string with a JSON content type unchanged, so the route's response schema documents the answer
 * without re-serializing it. Fastify runs no preSerialization hook for a string, so the deadline
 * check there (request-deadline.ts) does not see it: the handlers check the deadline after their
 * last step instead.
 */
import type { FastifyReply } from 'fastify';
import type { ServerList, ServerResponseJson } from '../mcp-servers/present.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

/** Sends `{"items":[…],"page":{…}}`. */
export function sendJsonPage(reply: FastifyReply, result: { items: readonly string[]; page: object }): FastifyReply {
  return reply.type(JSON_TYPE).send(`{"items":[${result.items.join(',')}],"page":${JSON.stringify(result.page)}}`);
}

/** Sends one MCP server version's answer. */
export function sendServerResponse(reply: FastifyReply, server: ServerResponseJson): FastifyReply {
  return reply.type(JSON_TYPE).send(server);
}

/** Sends `{"servers":[…],"metadata":{…}}`, the metadata's members in its schema's order (`count` first). */
export function sendServerList(reply: FastifyReply, list: ServerList): FastifyReply {
  const { count, nextCursor } = list.metadata;
  const cursor = nextCursor === undefined ? '' : `,"nextCursor":${JSON.stringify(nextCursor)}`;
  return reply.type(JSON_TYPE).send(`{"servers":[${list.servers.join(',')}],"metadata":{"count":${count}${cursor}}}`);
}
