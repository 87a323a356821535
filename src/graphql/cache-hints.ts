/**
 * `Cache-Control` of GraphQL answers, for the caches in front of the subgraph (a router's response
 * or entity cache, a CDN). Only a query whose root fields all answer the same for every caller
 * (SAME_FOR_EVERYONE) is marked `public, max-age=…`: a shared cache may give it to every caller the
 * router has authenticated. Every other answer depends on the caller's organization and roles, or
 * changes with the next write, and is marked `no-store`: no shared cache may keep it (the subgraph's
 * own per-caller cache, response-cache.ts, is invalidated by writes; an outside cache would not be).
 * Answers with errors are `no-store` too.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { Kind, OperationTypeNode, type DocumentNode, type SelectionSetNode } from 'graphql';
import type { RequestContext } from '../context.ts';

/** Root fields whose answer is the same for every caller (not the SDL: production hides it from anonymous callers). */
const SAME_FOR_EVERYONE = new Set(['insightSchemas', '__typename']);

/** How long a shared cache may keep such an answer: they change only with a new release. */
export const PUBLIC_MAX_AGE_S = 300;

/** True when every root field of the selection (through fragments) is in SAME_FOR_EVERYONE. */
function onlySameForEveryone(
  selectionSet: SelectionSetNode,
  document: DocumentNode,
  seen = new Set<string>(),
): boolean {
  return selectionSet.selections.every((s) => {
    if (s.kind === Kind.FIELD) return SAME_FOR_EVERYONE.has(s.name.value);
    if (s.kind === Kind.INLINE_FRAGMENT) return onlySameForEveryone(s.selectionSet, document, seen);
    const name = s.name.value;
    if (seen.has(name)) return true;
    seen.add(name);
    const fragment = document.definitions.find((d) => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === name);
    return fragment?.kind === Kind.FRAGMENT_DEFINITION && onlySameForEveryone(fragment.selectionSet, document, seen);
  });
}

/** Sets `cache-control` on every GraphQL answer that reached execution. */
export function cacheHintsPlugin(): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ operation, document, response }) {
          const body = response.body;
          const clean = body.kind === 'single' && body.singleResult.errors === undefined;
          const shared =
            clean &&
            operation?.operation === OperationTypeNode.QUERY &&
            document !== undefined &&
            onlySameForEveryone(operation.selectionSet, document);
          response.http.headers.set('cache-control', shared ? `public, max-age=${PUBLIC_MAX_AGE_S}` : 'no-store');
        },
      };
    },
  };
}
