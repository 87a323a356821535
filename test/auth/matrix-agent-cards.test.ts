/**
 * The authorization matrix of agent cards and the AI catalog: the card over REST, GraphQL
 * `agent(id) { card }` and federation `_entities` answers like every agent read (readable -> 200,
 * same organization but unreadable -> 403 access_denied, another organization or absent -> 404
 * not_found, authentication failures their own code); the catalog lists exactly the agents the
 * caller reads; and a card's skills are exactly the readable skills its agent uses.
 */
import { describe, expect, it } from 'vitest';
import {
  CALLERS,
  bundle,
  expected,
  graph,
  matrixApp,
  rest,
  runMatrix,
  useMatrixApp,
  WORKSPACE,
  type Caller,
  type Operation,
} from './matrix.ts';

const agents = ['ag-1', 'ag-2', 'ag-3', 'ag-b1', 'ag-none'];

/** Whether the caller's catalog lists the agent: `listed`, `absent`, or the failure's status and code. */
async function inCatalog(header: string, id: string) {
  const res = await matrixApp().app.inject({
    method: 'GET',
    url: '/.well-known/ai-catalog.json',
    headers: { authorization: header },
  });
  if (res.statusCode !== 200) return { status: res.statusCode, code: res.json<{ code: string }>().code };
  const urls = res.json<{ entries: { url: string }[] }>().entries.map((e) => e.url);
  return { status: 200, code: urls.includes(`http://localhost:80/agent/v1/agents/${id}/card`) ? 'listed' : 'absent' };
}

function expectedListing(caller: Caller, target: string): { status: number; code: string } {
  if (caller.fails !== undefined) return caller.fails;
  const ws = WORKSPACE[target] ?? null;
  return { status: 200, code: ws !== null && (caller.reads ?? []).includes(ws) ? 'listed' : 'absent' };
}

const OPERATIONS: Operation[] = [
  {
    name: 'REST agent card',
    targets: agents,
    call: (h, id) => rest('GET', `/agent/v1/agents/${id}/card`, h),
  },
  {
    name: 'GraphQL agent(id) { card }',
    targets: agents,
    call: (h, id) => graph(h, `{ agent(id: "${id}") { card } }`, (d) => (d.agent as { card?: unknown } | null)?.card),
  },
  {
    name: 'federation _entities Agent { card }',
    targets: agents,
    call: (h, id) =>
      graph(
        h,
        `{ _entities(representations: [{__typename: "Agent", id: "${id}"}]) { ... on Agent { card } } }`,
        (d) => (d._entities as ({ card?: unknown } | null)[])[0]?.card,
      ),
  },
  { name: 'AI catalog', targets: agents, call: inCatalog, expects: expectedListing },
];

// ag-2 (ws-a-sub) uses sk-1 (ws-a-team): callers who read only ws-a-sub see ag-2 but not that skill.
useMatrixApp((b) => {
  b.relationships.push({
    from: { id: 'ag-2', kind: 'agent' },
    to: { id: 'sk-1', kind: 'skill' },
    rel_type: 'uses_skill',
    provenance: 'declared',
    relationship_status: 'active',
  });
});
runMatrix('authorization matrix of agent cards and the AI catalog', OPERATIONS);

describe("a card's skills are the readable skills its agent uses", () => {
  for (const caller of CALLERS.filter((c) => c.fails === undefined)) {
    it(`as ${caller.name}`, async () => {
      const header = await caller.header();
      const reads = caller.reads ?? [];
      for (const agent of agents.filter((id) => expected(caller, id).status === 200)) {
        const want = bundle.relationships
          .filter((r) => r.from.id === agent && r.rel_type === 'uses_skill')
          .map((r) => r.to.id)
          .filter((id) => reads.includes(WORKSPACE[id] ?? ''))
          .sort();
        const res = await matrixApp().app.inject({
          method: 'GET',
          url: `/agent/v1/agents/${agent}/card`,
          headers: { authorization: header },
        });
        const skills = res.json<{ skills: { id: string }[] }>().skills.map((s) => s.id);
        expect(skills, `skills of ${agent}`).toEqual(want);
      }
    });
  }

  it('the fixture crosses: a skill some readers of its agent see and others do not', () => {
    const subOnly = CALLERS.find((c) => c.name === 'editor of a sub-workspace only');
    expect(expected(subOnly as Caller, 'ag-2').status).toBe(200);
    expect(expected(subOnly as Caller, 'sk-1').status).toBe(403);
  });
});
