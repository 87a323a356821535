/**
 * The nesting bound of a GraphQL document, checked on its text before anything parses it. The
 * graphql-js parser, the validation rules and the analysis recurse once per level of `{`, `[` or
 * `(`; a 1 MiB body holds hundreds of thousands of levels, enough to overflow the stack. Within
 * the bound no recursion comes near the stack's size; selections are held to a far smaller depth
 * by the operation limits, the bound leaves room for nested argument values (JSON literals).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Levels of `{`, `[` and `(` a document may nest. */
export const MAX_NESTING = 64;

const OPEN = new Set([0x7b, 0x5b, 0x28]); // { [ (
const CLOSE = new Set([0x7d, 0x5d, 0x29]); // } ] )
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const HASH = 0x23;
const NEWLINE = 0x0a;
const RETURN = 0x0d;

/** Where the string that opens at `i` (a `"` or `"""`) ends: the index just after it. */
function skipString(source: string, i: number): number {
  if (source.startsWith('"""', i)) {
    let j = i + 3;
    for (;;) {
      const end = source.indexOf('"""', j);
      if (end < 0) return source.length;
      if (source.charCodeAt(end - 1) !== BACKSLASH) return end + 3;
      j = end + 3;
    }
  }
  let j = i + 1;
  while (j < source.length) {
    const c = source.charCodeAt(j);
    if (c === BACKSLASH) j += 2;
    else if (c === QUOTE || c === NEWLINE || c === RETURN) return j + 1;
    else j++;
  }
  return j;
}

/** The deepest bracket nesting of `source` outside strings and comments: linear in the text, no recursion. */
export function nestingDepth(source: string): number {
  let depth = 0;
  let deepest = 0;
  let i = 0;
  while (i < source.length) {
    const c = source.charCodeAt(i);
    if (c === QUOTE) {
      i = skipString(source, i);
      continue;
    }
    if (c === HASH) {
      while (i < source.length && source.charCodeAt(i) !== NEWLINE && source.charCodeAt(i) !== RETURN) i++;
      continue;
    }
    if (OPEN.has(c)) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (CLOSE.has(c) && depth > 0) {
      depth--;
    }
    i++;
  }
  return deepest;
}

/** The query text of a GraphQL request over HTTP (POST body or GET parameter), if any. */
function queryText(body: unknown, query: unknown): unknown {
  const from = body !== null && typeof body === 'object' ? body : query;
  return from !== null && typeof from === 'object' ? (from as { query?: unknown }).query : undefined;
}

/**
 * A preHandler of the /graphql route: refuses, before Apollo parses anything, a document nested
 * deeper than `max`, with GRAPHQL_PARSE_FAILED (HTTP 400) naming the limit. A persisted query
 * passed this check when it was registered.
 */
export function refuseDeepDocuments(max = MAX_NESTING) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const text = queryText(request.body, request.query);
    if (typeof text !== 'string') return;
    const depth = nestingDepth(text);
    if (depth <= max) return;
    const extensions = {
      code: 'GRAPHQL_PARSE_FAILED',
      http: { status: 400 },
      limit: 'nesting',
      value: depth,
      max,
      traceId: request.id,
    };
    await reply
      .code(400)
      .type('application/json; charset=utf-8')
      .send({
        errors: [{ message: `the document nests brackets ({, [, () more than ${max} levels deep`, extensions }],
      });
  };
}
