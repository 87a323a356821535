/**
 * Reading insights over REST and GraphQL, on the real SQLite store: a skill's and an agent's
 * insights list exactly the recorded insights about them in the caller's readable workspaces,
 * newest window first (ties by id), every page through the keyset cursor; `kind` (repeated or a
 * comma list), `since` and `limit` filter and bound; a cursor of another list and bad parameters are
 * refused; a subject the caller cannot read answers 404/403 as any read. GraphQL's three fields
 * answer the same items as REST, and the workspace feed holds its readable descendants.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insightResource } from '../../src/insights/resource.ts';
import { INSIGHT_KINDS, type InsightRecord } from '../../src/store/insight-port.ts';
import { insightRecord, newestFirst } from '../fixtures/insights.ts';
import { expectProblem } from '../helpers/problem.ts';
import { fileDatabase } from '../helpers/pg-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const BASE = 1_790_000_000;
const records: InsightRecord[] = [];
for (let i = 0; i < 45; i++) {
  // Pairs share a window end, so the order within one end is the id's.
  const kind = INSIGHT_KINDS[i % INSIGHT_KINDS.length] ?? 'usage_summary';
  records.push(
    insightRecord(
      `in-team-${String(i).padStart(2, '0')}`,
      kind,
      { type: 'skill', id: 'sk-1' },
      'ws-a-team',
      BASE - Math.floor(i / 2) * 3600,
    ),
  );
}
for (let i = 0; i < 5; i++)
  records.push(
    insightRecord(`in-other-${i}`, 'cost_spike', { type: 'skill', id: 'sk-1' }, 'ws-a-other', BASE - i * 7200 - 1),
  );
for (let i = 0; i < 3; i++)
  records.push(
    insightRecord(`in-root-${i}`, 'usage_summary', { type: 'skill', id: 'sk-1' }, 'ws-a', BASE - i * 5000 - 2),
  );
for (let i = 0; i < 4; i++)
  records.push(
    insightRecord(`in-agent-${i}`, 'latency_regression', { type: 'agent', id: 'ag-1' }, 'ws-a-team', BASE - i * 3600),
  );
records.push(
  insightRecord(
    'in-tool-1',
    'tool_failure_hotspot',
    { type: 'tool', id: 'create_issue', server: 'srv-github' },
    'ws-a-team',
    BASE,
  ),
  insightRecord('in-b-1', 'usage_summary', { type: 'skill', id: 'sk-b1' }, 'ws-b', BASE, 'org-b'),
);

/** What a caller reading `workspaces` should get about a subject, in order, as both transports show it. */
function expected(type: string, id: string, workspaces: string[], keep: (r: InsightRecord) => boolean = () => true) {
  return records
    .filter((r) => r.subject.type === type && r.subject.id === id && workspaces.includes(r.workspace_id) && keep(r))
    .sort(newestFirst)
    .map(insightResource);
}

let t: TestApp;
let admin: { authorization: string };
let viewer: { authorization: string };
const ADMIN_READS = ['ws-a', 'ws-a-team', 'ws-a-sub', 'ws-a-other'];
const VIEWER_READS = ['ws-a-team', 'ws-a-sub'];

/** The engines: embedded always, PostgreSQL (server mode) where a server answers. */
const engines: [string, () => Record<string, string>][] = [['sqlite', () => ({})]];
const server = await fileDatabase('gw_insights_read');
if (server !== null) engines.push(['postgres', () => server]);

for (const [engine, env] of engines) {
  describe(`reading insights (${engine})`, () => {
    beforeAll(async () => {
      t = await startTestApp({ env: env() });
      expect(await t.registry.insights.recordInsights(records, Date.now())).toHaveLength(records.length);
      admin = await t.auth('u-admin');
      viewer = await t.auth('u-viewer');
    });
    afterAll(async () => {
      await t.close();
    });

    async function get(url: string, headers: { authorization: string }) {
      return t.app.inject({ method: 'GET', url, headers });
    }

    type Page = { items: ReturnType<typeof insightResource>[]; next_cursor?: string };

    /** Every item of a list, page by page through next_cursor; the page sizes seen. */
    async function allPages(path: string, query: string, headers: { authorization: string }) {
      const items: Page['items'] = [];
      const sizes: number[] = [];
      let cursor: string | undefined;
      do {
        const res = await get(`${path}?${query}${cursor !== undefined ? `&cursor=${cursor}` : ''}`, headers);
        expect(res.statusCode).toBe(200);
        const page = res.json<Page>();
        items.push(...page.items);
        sizes.push(page.items.length);
        cursor = page.next_cursor;
      } while (cursor !== undefined && sizes.length < 20);
      return { items, sizes };
    }

    describe('REST lists', () => {
      it('a skill: every insight in the readable workspaces, newest window first, page by page', async () => {
        const all = await allPages('/skill/v1/skills/sk-1/insights', 'limit=7', admin);
        expect(all.items).toEqual(expected('skill', 'sk-1', ADMIN_READS));
        expect(all.items).toHaveLength(53);
        expect(all.sizes).toEqual([7, 7, 7, 7, 7, 7, 7, 4]);
        const seen = await allPages('/skill/v1/skills/sk-1/insights', 'limit=10', viewer);
        expect(seen.items).toEqual(expected('skill', 'sk-1', VIEWER_READS));
        expect(seen.items.map((i) => i.workspace_id)).not.toContain('ws-a-other');
      });

      it('default page 20, a larger limit clamped to 100, the last page without next_cursor', async () => {
        const first = (await get('/skill/v1/skills/sk-1/insights', admin)).json<Page>();
        expect(first.items).toEqual(expected('skill', 'sk-1', ADMIN_READS).slice(0, 20));
        expect(typeof first.next_cursor).toBe('string');
        const whole = (await get('/skill/v1/skills/sk-1/insights?limit=500', admin)).json<Page>();
        expect(whole.items).toHaveLength(53);
        expect(whole).not.toHaveProperty('next_cursor');
      });

      it('kind repeated or as a comma list, and since, filter', async () => {
        const kinds = ['cost_spike', 'latency_regression'];
        const want = expected('skill', 'sk-1', ADMIN_READS, (r) => kinds.includes(r.kind));
        const repeated = await allPages(
          '/skill/v1/skills/sk-1/insights',
          'kind=cost_spike&kind=latency_regression',
          admin,
        );
        const comma = await allPages(
          '/skill/v1/skills/sk-1/insights',
          'kind=cost_spike,latency_regression,cost_spike',
          admin,
        );
        expect(repeated.items).toEqual(want);
        expect(comma.items).toEqual(want);
        expect(want.length).toBeGreaterThan(5);
        const since = BASE - 5 * 3600;
        const recent = await allPages('/skill/v1/skills/sk-1/insights', `since=${since}`, admin);
        expect(recent.items).toEqual(expected('skill', 'sk-1', ADMIN_READS, (r) => r.window_end_s > since));
        expect(recent.items.length).toBeLessThan(53);
      });

      it('an agent’s insights, and a tool subject is nobody’s skill', async () => {
        const page = (await get('/agent/v1/agents/ag-1/insights', viewer)).json<Page>();
        expect(page.items).toEqual(expected('agent', 'ag-1', VIEWER_READS));
        expect(page.items).toHaveLength(4);
        expect(page.items.map((i) => i.id)).not.toContain('in-tool-1');
      });

      it('refuses bad parameters and foreign cursors with 400 invalid_query', async () => {
        for (const query of [
          'kind=nope',
          'kind=cost_spike,',
          'limit=0',
          'since=-1',
          'limit=x',
          'other=1',
          'cursor=%21%21',
        ])
          expectProblem(await get(`/skill/v1/skills/sk-1/insights?${query}`, admin), 400, 'invalid_query');
        const agentPage = (await get('/agent/v1/agents/ag-1/insights?limit=1', admin)).json<Page>();
        expect(agentPage.next_cursor).toBeDefined();
        const foreign = await get(`/skill/v1/skills/sk-1/insights?cursor=${agentPage.next_cursor ?? ''}`, admin);
        expectProblem(foreign, 400, 'invalid_query');
        const skillPage = (await get('/skill/v1/skills/sk-1/insights?limit=1&kind=cost_spike', admin)).json<Page>();
        const otherKinds = await get(`/skill/v1/skills/sk-1/insights?cursor=${skillPage.next_cursor ?? ''}`, admin);
        expectProblem(otherKinds, 400, 'invalid_query');
      });

      it('reads the subject as any read: 404 unknown, of another organization or of another kind; 403 unreadable', async () => {
        const none = await t.auth('u-none');
        expectProblem(await get('/skill/v1/skills/sk-none/insights', admin), 404, 'not_found');
        expectProblem(await get('/skill/v1/skills/sk-b1/insights', admin), 404, 'not_found');
        expectProblem(await get('/skill/v1/skills/ag-1/insights', admin), 404, 'not_found');
        expectProblem(await get('/agent/v1/agents/sk-1/insights', admin), 404, 'not_found');
        expectProblem(await get('/skill/v1/skills/sk-1/insights', none), 403, 'access_denied');
        expectProblem(await get('/agent/v1/agents/ag-1/insights', none), 403, 'access_denied');
        const b = await t.auth('u-b', 'org-b');
        const theirs = (await get('/skill/v1/skills/sk-b1/insights', b)).json<Page>();
        expect(theirs.items.map((i) => i.id)).toEqual(['in-b-1']);
      });
    });

    async function graph(query: string, headers: { authorization: string }, variables: object = {}) {
      const res = await t.app.inject({ method: 'POST', url: '/graphql', headers, payload: { query, variables } });
      return res.json<{
        data?: Record<string, unknown>;
        errors?: { extensions: { code: string; field?: string } }[];
      }>();
    }

    const NODE =
      'id kind subject { type id server } workspaceId window { startTimeUnixSeconds endTimeUnixSeconds } payload createdAt';
    /** A REST item as GraphQL shows it. */
    const asNode = (i: ReturnType<typeof insightResource>) => ({
      id: i.id,
      kind: i.kind.toUpperCase(),
      subject: {
        type: i.subject.type.toUpperCase(),
        id: i.subject.id,
        server: 'server' in i.subject ? i.subject.server : null,
      },
      workspaceId: i.workspace_id,
      window: {
        startTimeUnixSeconds: i.window.start_time_unix_seconds,
        endTimeUnixSeconds: i.window.end_time_unix_seconds,
      },
      payload: i.payload,
      createdAt: i.created_at,
    });

    type Connection = {
      nodes: ReturnType<typeof asNode>[];
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
    };

    describe('GraphQL', () => {
      it('Skill.insights and Agent.insights page through the same items as REST', async () => {
        const nodes: Connection['nodes'] = [];
        let after: string | null = null;
        for (let n = 0; n < 10; n++) {
          const body = await graph(
            `query($after: String) { skill(id: "sk-1") { insights(first: 12, after: $after) { nodes { ${NODE} } pageInfo { hasNextPage endCursor } } } }`,
            viewer,
            { after },
          );
          const c = (body.data?.skill as { insights: Connection }).insights;
          nodes.push(...c.nodes);
          if (!c.pageInfo.hasNextPage) break;
          after = c.pageInfo.endCursor;
        }
        expect(nodes).toEqual(expected('skill', 'sk-1', VIEWER_READS).map(asNode));
        const agent = await graph(
          `{ agent(id: "ag-1") { insights(kind: LATENCY_REGRESSION) { nodes { ${NODE} } } } }`,
          admin,
        );
        expect((agent.data?.agent as { insights: Connection }).insights.nodes).toEqual(
          expected('agent', 'ag-1', ADMIN_READS).map(asNode),
        );
      });

      it('Workspace.insights: the workspace and its readable descendants, every subject, the subject resolved', async () => {
        const body = await graph(
          `{ workspace(id: "ws-a-team") { insights(first: 100) { nodes { id workspaceId subject { type skill { id } agent { id } } } } } }`,
          admin,
        );
        const nodes = (
          body.data?.workspace as {
            insights: {
              nodes: {
                id: string;
                workspaceId: string;
                subject: { type: string; skill: { id: string } | null; agent: { id: string } | null };
              }[];
            };
          }
        ).insights.nodes;
        const want = records.filter((r) => ['ws-a-team', 'ws-a-sub'].includes(r.workspace_id)).sort(newestFirst);
        expect(nodes.map((n) => n.id)).toEqual(want.map((r) => r.id));
        const agentNode = nodes.find((n) => n.id === 'in-agent-0');
        expect(agentNode?.subject).toEqual({ type: 'AGENT', skill: null, agent: { id: 'ag-1' } });
        expect(nodes.find((n) => n.id === 'in-tool-1')?.subject).toEqual({ type: 'TOOL', skill: null, agent: null });
        const root = await graph('{ workspace(id: "ws-a") { insights(first: 100) { nodes { id } } } }', admin);
        expect((root.data?.workspace as { insights: { nodes: unknown[] } }).insights.nodes).toHaveLength(
          records.length - 1,
        );
      });

      it('refuses a cursor of another list (invalid_field /after) and a negative first', async () => {
        const skill = await graph('{ skill(id: "sk-1") { insights(first: 1) { pageInfo { endCursor } } } }', admin);
        const cursor = (skill.data?.skill as { insights: { pageInfo: { endCursor: string } } }).insights.pageInfo
          .endCursor;
        const other = await graph(`{ agent(id: "ag-1") { insights(after: "${cursor}") { nodes { id } } } }`, admin);
        expect(other.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_field', field: '/after' });
        const negative = await graph('{ skill(id: "sk-1") { insights(first: -1) { nodes { id } } } }', admin);
        expect(negative.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_field', field: '/first' });
      });
    });
  });
}

describe('GraphQL batching', () => {
  it('equal pages asked together are read once, and pages of one size leave in one store call', async () => {
    const calls: string[][] = [];
    const counted = await startTestApp({
      wrapRegistry: (store) =>
        new Proxy(store, {
          get(target, key, receiver) {
            if (key !== 'insights') return Reflect.get(target, key, receiver) as unknown;
            const insights = target.insights;
            return new Proxy(insights, {
              get(i, k, r) {
                if (k === 'listInsights') throw new Error('GraphQL reads insights in batches only');
                if (k !== 'listInsightPages') return Reflect.get(i, k, r) as unknown;
                return (q: Parameters<typeof insights.listInsightPages>[0]) => {
                  calls.push([String(q.limit), ...q.pages.map((p) => p.subject?.id ?? 'feed')]);
                  return insights.listInsightPages(q);
                };
              },
            });
          },
        }),
    });
    try {
      const res = await counted.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: await counted.auth('u-admin'),
        payload: {
          query:
            '{ a: skill(id: "sk-1") { insights { nodes { id } } } b: skill(id: "sk-1") { insights { nodes { id } } } c: agent(id: "ag-1") { usedSkills { insights { nodes { id } } } insights(first: 3) { nodes { id } } } d: skill(id: "sk-1") { insights(first: 3) { nodes { id } } } w: workspace(id: "ws-a") { insights(first: 3) { nodes { id } } } }',
        },
      });
      expect(res.json<{ errors?: unknown }>().errors).toBeUndefined();
      // The root level's subjects: pages of 20 (a and b, one page) and of 3 (d and ag-1), the size
      // and one more asked; ag-1's skill sk-1 is a's page, read already. The feed (its list known
      // sooner: no subject to read first) leaves on its own.
      expect(calls.sort()).toEqual([
        ['21', 'sk-1'],
        ['4', 'ag-1', 'sk-1'],
        ['4', 'feed'],
      ]);
    } finally {
      await counted.close();
    }
  });
});
