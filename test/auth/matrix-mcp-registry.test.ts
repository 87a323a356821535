/**
 * The authorization matrix of the MCP Registry API v0.1 (test/auth/matrix.ts): every path for every
 * kind of caller, plus a request without credentials, against servers of a readable workspace, of
 * the same organization but unreadable, of another organization, and absent. Reads follow the
 * matrix's read rule (by name: 403 in the caller's organization, 404 elsewhere); the list shows
 * exactly the readable servers. Without credentials, only the published workspace (ws-a-team, not
 * its sub-workspace) reads, as 404 elsewhere; publish needs can_create_content on the target
 * workspace, and is never anonymous.
 */
import { beforeAll } from 'vitest';
import { publishVersions } from '../fixtures/mcp-registry/servers.ts';
import { serverJson } from '../fixtures/mcp-registry/servers.ts';
import {
  WORKSPACE,
  expected,
  matrixApp,
  rest,
  runMatrix,
  useMatrixApp,
  type Caller,
  type Operation,
} from './matrix.ts';

/** Server name -> its workspace (null: no such server). */
const SERVERS: Record<string, string | null> = {
  'io.github.m/team': 'ws-a-team',
  'io.github.m/sub': 'ws-a-sub',
  'io.github.m/other': 'ws-a-other',
  'io.github.m/bee': 'ws-b',
  'io.github.m/none': null,
};
const names = Object.keys(SERVERS);
const ORG_OF: Record<string, string> = { 'ws-b': 'org-b' };

useMatrixApp(
  () => {
    Object.assign(WORKSPACE, SERVERS);
  },
  { MCP_REGISTRY_PUBLIC_WORKSPACES: 'ws-a-team' },
);
beforeAll(async () => {
  await publishVersions(
    matrixApp().registry,
    Object.entries(SERVERS).flatMap(([name, ws]) =>
      ws === null
        ? []
        : [{ id: name.split('/')[1] as string, orgId: ORG_OF[ws] ?? 'org-a', workspaceId: ws, name, version: '1.0.0' }],
    ),
  );
});

/** Without credentials: reads what is published (ws-a-team exactly), writes nothing. */
const ANONYMOUS: Caller = {
  name: 'anonymous (no credentials)',
  header: async () => '',
  reads: ['ws-a-team'],
  writes: [],
  org: new Set(['ws-a-team']),
};

const enc = encodeURIComponent;

/** The list as a read: 200 `listed` when the target is in it, `absent` when not. */
async function listed(header: string, name: string) {
  const res = await matrixApp().app.inject({
    method: 'GET',
    url: `/v0.1/servers?search=${enc(name)}`,
    headers: header === '' ? {} : { authorization: header },
  });
  if (res.statusCode !== 200) return { status: res.statusCode, code: res.json<{ code: string }>().code };
  const found = res.json<{ servers: { server: { name: string } }[] }>().servers.some((s) => s.server.name === name);
  return { status: 200, code: found ? 'listed' : 'absent' };
}

let version = 0;
function publishAnswer(caller: Caller, name: string): { status: number; code?: string } {
  if (caller.fails !== undefined) return caller.fails;
  if (caller === ANONYMOUS) return { status: 401, code: 'token_missing' };
  const ws = SERVERS[name] ?? 'ws-none';
  if (!(caller.org ?? new Set()).has(ws)) return { status: 404, code: 'not_found' };
  return (caller.writes ?? []).includes(ws) ? { status: 200 } : { status: 403, code: 'access_denied' };
}

const OPERATIONS: Operation[] = [
  {
    name: 'GET /v0.1/servers',
    targets: names,
    call: listed,
    expects: (caller, name) =>
      caller.fails ?? { status: 200, code: expected(caller, name).status === 200 ? 'listed' : 'absent' },
  },
  {
    name: 'GET /v0.1/servers/{name}/versions',
    targets: names,
    call: (h, name) => rest('GET', `/v0.1/servers/${enc(name)}/versions`, h),
  },
  {
    name: 'GET /v0.1/servers/{name}/versions/latest',
    targets: names,
    call: (h, name) => rest('GET', `/v0.1/servers/${enc(name)}/versions/latest`, h),
  },
  {
    name: 'GET /v0.1/servers/{name}/versions/{version}',
    targets: names,
    call: (h, name) => rest('GET', `/v0.1/servers/${enc(name)}/versions/1.0.0`, h),
  },
  {
    name: 'POST /v0.1/publish (a new version, to the server’s workspace)',
    targets: names,
    call: (h, name) =>
      rest('POST', `/v0.1/publish?workspace_id=${SERVERS[name] ?? 'ws-none'}`, h, serverJson(name, `2.0.${++version}`)),
    expects: publishAnswer,
  },
];

runMatrix('MCP Registry API v0.1 authorization', OPERATIONS, [ANONYMOUS]);
