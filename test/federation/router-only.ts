/**
 * The subgraph SDL for @apollo/gateway, the in-process gateway of the supergraph tests: it refuses
 * a supergraph whose `for: SECURITY` features it cannot enforce (`@authenticated`, `@policy`: router
 * features), so they are left out of its copy. Routers that enforce them get the SDL as it is.
 */
import { visit, type DocumentNode } from 'graphql';
import { loadTypeDefs } from '../../src/graphql/type-defs.ts';

const ROUTER_ONLY = new Set(['authenticated', 'policy']);

/** schema/*.graphql without the applications of the router-only directives. */
export function typeDefsForApolloGateway(): DocumentNode {
  return visit(loadTypeDefs(), {
    Directive: (node) => (ROUTER_ONLY.has(node.name.value) ? null : undefined),
  });
}
