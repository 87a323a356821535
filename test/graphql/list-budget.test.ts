/**
 * The execution backstop of the cost limit (DESIGN §12): lists without a page argument hand out
 * at most as many items per request as the cost limit allows. A workspace chain of 50 levels makes
 * `subtree { subtree }` hold 1,387 workspaces while the static estimate prices it at 111.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATION_TOO_LARGE, unpagedLists } from '../../src/graphql/limits/list-budget.ts';
import { buildRegistrySubgraph } from '../../src/graphql/schema.ts';
import { chainBundle } from '../fixtures/chain-bundle.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { gql } from './helpers.ts';

const CHAIN = 50;
const NESTED = '{ workspace(id: "ws-a") { id subtree { subtree { id } } } }';
const SUBTREE = 4 + CHAIN;
// ws-a's subtree, then the subtree of each: ws-a, team (2), sub, other, and the chain (50 + 49 + … + 1)
const REAL_ITEMS = SUBTREE + SUBTREE + 2 + 1 + 1 + (CHAIN * (CHAIN + 1)) / 2;

let low: TestApp;
let standard: TestApp;
beforeAll(async () => {
  [low, standard] = await Promise.all([
    startTestApp({ bundle: chainBundle(CHAIN), env: { GRAPHQL_MAX_COST: '1000' } }),
    startTestApp({ bundle: chainBundle(CHAIN) }),
  ]);
});
afterAll(async () => {
  await Promise.all([low.close(), standard.close()]);
});

describe('list budget', () => {
  it('under a generous limit the nested subtrees are answered whole', async () => {
    const res = await gql(standard, NESTED);
    expect(res.errors).toBeUndefined();
    const subtree = res.data.workspace.subtree as { subtree: unknown[] }[];
    const items = subtree.length + subtree.reduce((n, w) => n + w.subtree.length, 0);
    expect(items).toBe(REAL_ITEMS);
    expect(REAL_ITEMS).toBeGreaterThan(1000);
  });

  it('passes the static estimate but fails the field once the lists outgrow the limit: OPERATION_TOO_LARGE, HTTP 400', async () => {
    const res = await gql(low, NESTED);
    expect(res.status).toBe(400);
    expect(res.data).toEqual({ workspace: null });
    const errors = res.errors ?? [];
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) {
      expect(error.extensions).toMatchObject({
        code: OPERATION_TOO_LARGE,
        http: { status: 400 },
        limit: 'items',
        max: 1000,
      });
      expect(error.extensions.value as number).toBeGreaterThan(1000);
      expect(error.path?.slice(0, 2)).toEqual(['workspace', 'subtree']);
    }
    expect(errors[0]?.message).toContain('1000 items');
  });

  it('a query within the budget on the same data is answered', async () => {
    const res = await gql(low, '{ workspace(id: "ws-a") { subtree { id children { id } } } }');
    expect(res.errors).toBeUndefined();
    expect(res.data.workspace.subtree).toHaveLength(SUBTREE);
  });

  it('every unpaged list of objects spends the budget; paged and statically priced lists do not', () => {
    const lists = unpagedLists(buildRegistrySubgraph());
    expect(lists).toEqual(
      expect.arrayContaining([
        'Workspace.children',
        'Workspace.subtree',
        'Workspace.projects',
        'Workspace.repos',
        'Workspace.members',
        'Viewer.workspaces',
        'Agent.versions',
        'Tool.versions',
        'Skill.versions',
        'Prompt.versions',
        'Document.versions',
        'Agent.usedTools',
        'Agent.usedSkills',
        'Tool.usedBy',
        'Skill.usedBy',
        'Relationships.incoming',
        'Relationships.outgoing',
        'McpServer.versions',
        'McpServer.packages',
        'McpServer.remotes',
      ]),
    );
    for (const priced of [
      'Query.tools',
      'Query.mcpServers',
      'McpServer.tools',
      'McpServerConnection.nodes',
      'Query._entities',
      'AgentConnection.nodes',
      'ToolConnection.edges',
      'StatsSeries.points',
      'TimeSeriesStats.series',
    ]) {
      expect(lists).not.toContain(priced);
    }
  });
});
