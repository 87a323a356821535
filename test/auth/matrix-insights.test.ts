/**
 * The authorization matrix of insights and webhook subscriptions (test/auth/matrix.ts): a skill's
 * and an agent's insights over REST, GraphQL and federation `_entities`, and a workspace's feed,
 * answer like every read of their subject (readable -> 200, same organization but unreadable -> 403
 * access_denied, another organization or absent -> 404 not_found); the lists hold exactly the
 * insights of the caller's readable workspaces. A workspace's webhook subscriptions (create, list,
 * delete; REST and GraphQL) and the writing of its insight detection settings (REST and GraphQL)
 * answer only its admins: a reader who is not one gets 403 access_denied (viewers, editors, service
 * accounts, and an admin of another workspace), the others as any read; reading the settings is
 * any read of the workspace.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { InsightRecord } from '../../src/store/insight-port.ts';
import { subscription } from '../contract/insight-contract.ts';
import { insightRecord } from '../fixtures/insights.ts';
import {
  CALLERS,
  END,
  ORG_A,
  TEAM,
  expected,
  graph,
  matrixApp,
  rest,
  runMatrix,
  useMatrixApp,
  type Caller,
  type Operation,
} from './matrix.ts';

const workspaces = ['ws-a-team', 'ws-a-sub', 'ws-a-other', 'ws-b', 'ws-none'];
const agents = ['ag-1', 'ag-2', 'ag-3', 'ag-b1', 'ag-none'];
const skills = ['sk-1', 'sk-2', 'sk-b1', 'sk-none'];

/** The workspaces each caller administers (by name): the org admin the whole org, the workspace admin its team. */
const ADMINS: Record<string, readonly string[]> = {
  'org admin': [...ORG_A],
  'workspace admin': TEAM,
  'user of another organization': ['ws-b'],
};

/** A read's answer, then 403 for a reader who is not an admin of the workspace; `ok` for an admin. */
function expectedAdmin(ok: number) {
  return (caller: Caller, target: string): { status: number; code?: string } => {
    const read = expected(caller, target);
    if (read.status !== 200) return read;
    return (ADMINS[caller.name] ?? []).includes(target) ? { status: ok } : { status: 403, code: 'access_denied' };
  };
}

/** A REST request whose success is not a 200 with a body (201, 204). */
async function send(method: 'POST' | 'PUT' | 'DELETE', url: string, header: string, payload?: object) {
  const res = await matrixApp().app.inject({
    method,
    url,
    headers: { authorization: header, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(payload !== undefined ? { payload } : {}),
  });
  return res.statusCode < 300
    ? { status: res.statusCode }
    : { status: res.statusCode, code: res.json<{ code: string }>().code };
}

let made = 0;
/** A subscription of `workspace` stored directly, for a delete (an absent workspace's id names none). */
async function storedSubscription(workspace: string): Promise<string> {
  const id = `whs_matrix_${++made}`;
  if (workspace === 'ws-none') return id;
  await matrixApp().registry.insights.createSubscription(
    subscription(id, { org_id: workspace === 'ws-b' ? 'org-b' : 'org-a', workspace_id: workspace }),
  );
  return id;
}

const nodes = (d: unknown) => (d as { insights?: { nodes: unknown[] } } | null)?.insights?.nodes;
const CREATE = (ws: string) =>
  `mutation { createWebhookSubscription(input: { workspaceId: "${ws}", url: "https://93.184.215.14/g" }) { secret } }`;

const OPERATIONS: Operation[] = [
  {
    name: 'REST skill insights',
    targets: skills,
    call: (h, id) => rest('GET', `/skill/v1/skills/${id}/insights`, h),
  },
  {
    name: 'REST agent insights',
    targets: agents,
    call: (h, id) => rest('GET', `/agent/v1/agents/${id}/insights`, h),
  },
  {
    name: 'GraphQL skill(id) { insights }',
    targets: skills,
    call: (h, id) => graph(h, `{ skill(id: "${id}") { insights { nodes { id } } } }`, (d) => nodes(d.skill)),
  },
  {
    name: 'GraphQL agent(id) { insights }',
    targets: agents,
    call: (h, id) => graph(h, `{ agent(id: "${id}") { insights { nodes { id } } } }`, (d) => nodes(d.agent)),
  },
  {
    name: 'GraphQL workspace(id) { insights }',
    targets: workspaces,
    call: (h, id) => graph(h, `{ workspace(id: "${id}") { insights { nodes { id } } } }`, (d) => nodes(d.workspace)),
  },
  {
    name: 'federation _entities Skill { insights }',
    targets: skills,
    call: (h, id) =>
      graph(
        h,
        `{ _entities(representations: [{__typename: "Skill", id: "${id}"}]) { ... on Skill { insights { nodes { id } } } } }`,
        (d) => nodes((d._entities as unknown[])[0]),
      ),
  },
  {
    name: 'REST create a webhook subscription',
    targets: workspaces,
    call: (h, ws) => send('POST', `/skill/v1/workspaces/${ws}/webhooks`, h, { url: 'https://93.184.215.14/r' }),
    expects: expectedAdmin(201),
  },
  {
    name: 'REST list webhook subscriptions',
    targets: workspaces,
    call: (h, ws) => rest('GET', `/skill/v1/workspaces/${ws}/webhooks`, h),
    expects: expectedAdmin(200),
  },
  {
    name: 'REST delete a webhook subscription',
    targets: workspaces,
    call: async (h, ws) => send('DELETE', `/skill/v1/workspaces/${ws}/webhooks/${await storedSubscription(ws)}`, h),
    expects: expectedAdmin(204),
  },
  {
    name: 'REST read insight settings',
    targets: workspaces,
    call: (h, ws) => rest('GET', `/skill/v1/workspaces/${ws}/insight-settings`, h),
  },
  {
    name: 'REST set insight settings',
    targets: workspaces,
    call: (h, ws) =>
      send('PUT', `/skill/v1/workspaces/${ws}/insight-settings`, h, { overrides: { cooldown_hours: 48 } }),
    expects: expectedAdmin(200),
  },
  {
    name: 'GraphQL workspace(id) { insightSettings }',
    targets: workspaces,
    call: (h, ws) =>
      graph(h, `{ workspace(id: "${ws}") { insightSettings { name value } } }`, (d) => {
        const w = d.workspace as { insightSettings: unknown[] } | null;
        return w?.insightSettings.length;
      }),
  },
  {
    name: 'GraphQL setInsightSettings',
    targets: workspaces,
    call: (h, ws) =>
      graph(
        h,
        `mutation { setInsightSettings(input: { workspaceId: "${ws}", overrides: [{ name: "cooldown_hours", value: 48 }] }) { workspaceId } }`,
        (d) => d.setInsightSettings,
      ),
    expects: expectedAdmin(200),
  },
  {
    name: 'GraphQL createWebhookSubscription',
    targets: workspaces,
    call: (h, ws) => graph(h, CREATE(ws), (d) => d.createWebhookSubscription),
    expects: expectedAdmin(200),
  },
  {
    name: 'GraphQL workspace(id) { webhookSubscriptions }',
    targets: workspaces,
    call: (h, ws) =>
      graph(h, `{ workspace(id: "${ws}") { webhookSubscriptions { id } } }`, (d) => {
        const w = d.workspace as { webhookSubscriptions: unknown[] | null } | null;
        return w?.webhookSubscriptions;
      }),
    expects: expectedAdmin(200),
  },
  {
    name: 'GraphQL deleteWebhookSubscription',
    targets: workspaces,
    call: async (h, ws) =>
      graph(
        h,
        `mutation { deleteWebhookSubscription(workspaceId: "${ws}", id: "${await storedSubscription(ws)}") }`,
        (d) => d.deleteWebhookSubscription,
      ),
    expects: expectedAdmin(200),
  },
];

/** sk-1's and ag-1's insights in every workspace of org-a (ids name the workspace). */
const RECORDED: InsightRecord[] = [...ORG_A].flatMap((ws, i) => [
  insightRecord(`in-sk1-${ws}`, 'cost_spike', { type: 'skill', id: 'sk-1' }, ws, END - i * 3600),
  insightRecord(`in-ag1-${ws}`, 'latency_regression', { type: 'agent', id: 'ag-1' }, ws, END - i * 3600),
]);

useMatrixApp();
beforeAll(async () => {
  await matrixApp().registry.insights.recordInsights(RECORDED, Date.now());
});
runMatrix('authorization matrix of insights and webhook subscriptions', OPERATIONS);

describe('insight lists hold exactly the insights of the readable workspaces', () => {
  for (const caller of CALLERS.filter((c) => c.fails === undefined)) {
    it(`as ${caller.name}`, async () => {
      const headers = { authorization: await caller.header() };
      const reads = caller.reads ?? [];
      const want = (subject: string) =>
        RECORDED.filter((r) => r.subject.id === subject && reads.includes(r.workspace_id))
          .map((r) => r.id)
          .sort();
      for (const [path, subject] of [
        ['/skill/v1/skills/sk-1/insights', 'sk-1'],
        ['/agent/v1/agents/ag-1/insights', 'ag-1'],
      ] as const) {
        const res = await matrixApp().app.inject({ method: 'GET', url: path, headers });
        if (expected(caller, subject).status !== 200) continue;
        const ids = res
          .json<{ items: { id: string }[] }>()
          .items.map((i) => i.id)
          .sort();
        expect(ids, path).toEqual(want(subject));
      }
      const feed = await matrixApp().app.inject({
        method: 'POST',
        url: '/graphql',
        headers,
        payload: { query: '{ viewer { workspaces { id insights(first: 100) { nodes { id workspaceId } } } } }' },
      });
      const seen = feed
        .json<{ data: { viewer: { workspaces: { insights: { nodes: { id: string; workspaceId: string }[] } }[] } } }>()
        .data.viewer.workspaces.flatMap((w) => w.insights.nodes)
        .map((n) => n.workspaceId);
      // Each workspace's feed holds its readable subtree: every insight shows under each readable ancestor too.
      expect([...new Set(seen)].sort()).toEqual(
        [...new Set(RECORDED.filter((r) => reads.includes(r.workspace_id)).map((r) => r.workspace_id))].sort(),
      );
    });
  }
});
